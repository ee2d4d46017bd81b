// Lowercasing by locale on ASCII-only words. The tokenizer lowercases ASCII words
// byte by byte without ICU, except in Turkish and Azerbaijani, where capital I is
// dotless ı (U+0131) in lowercase; these words take the shortcut's branch, so the
// expected tokens are written out by hand from the Unicode case rules.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "posvec/tokenizer.hpp"

using namespace posvec;

namespace {
using Sentences = std::vector<Sentence>;

Sentences tokensIn(const std::string& locale, const std::string& text) {
  TokenizerOptions o;
  o.locale = locale;
  return Tokenizer(o).tokenize(text);
}

const std::string kDotless = "\xc4\xb1";  // ı, U+0131
}  // namespace

TEST_CASE("tokenizer lowercases ASCII capital I to dotless i in Turkish and Azerbaijani",
          "[tokenizer]") {
  // All-ASCII words, so that only the ASCII path could lowercase them.
  const std::string text = "ISTANBUL Irmak IZMIR ANKARA izmir";
  const Sentences turkic{{kDotless + "stanbul", kDotless + "rmak", kDotless + "zm" + kDotless + "r",
                          "ankara", "izmir"}};
  const Sentences others{{"istanbul", "irmak", "izmir", "ankara", "izmir"}};
  for (const char* locale : {"tr", "tr_TR", "az", "az-Latn-AZ"}) {
    INFO(locale);
    CHECK(tokensIn(locale, text) == turkic);
  }
  for (const char* locale : {"en", "de", "fr", "en_US"}) {
    INFO(locale);
    CHECK(tokensIn(locale, text) == others);
  }
}
