// Fuzzes the tokenizer on arbitrary bytes, across chunk boundaries: the text is
// tokenized whole, and streamed in chunks of 1-256 bytes as the input chooses
// (so a split inside a UTF-8 sequence, a CRLF, a clitic or a sentence is
// reached), optionally on two threads; both must give the same sentences or the
// same error. Input: an options byte (1 whitespace mode, 2 keep case, 4 no
// punctuation, 8 replace invalid UTF-8, 16 two threads), a chunk-size byte, the text.
#include "posvec/tokenizer.hpp"

#include <sstream>
#include <vector>

#include "fuzz_util.hpp"

namespace {

struct Outcome {
  std::vector<posvec::Sentence> sentences;
  std::string error;  // what() of the posvec::Error thrown, if any
};

template <typename F>
Outcome run(F&& f) {
  Outcome o;
  try {
    f(o.sentences);
  } catch (const posvec::Error& e) {
    o.error = e.what();
    o.sentences.clear();
  } catch (const std::exception& e) {
    posvec::fuzz::fail(std::string("exception outside posvec::Error: ") + e.what());
  }
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace posvec;
  if (size < 2) return 0;
  const std::uint8_t flags = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data + 2), size - 2);
  TokenizerOptions opt;
  opt.mode = flags & 1 ? TokenizerOptions::Mode::Whitespace : TokenizerOptions::Mode::Icu;
  opt.lowercase = !(flags & 2);
  opt.keepPunctuation = !(flags & 4);
  opt.replaceInvalid = (flags & 8) != 0;
  opt.chunkBytes = std::size_t{1} << 20;  // more than any input: one chunk
  const Tokenizer whole(opt);
  opt.chunkBytes = 1 + std::size_t{data[1]};  // 1-256 bytes
  opt.threads = flags & 16 ? 2 : 1;
  const Tokenizer chunked(opt);

  const Outcome a = run([&](std::vector<Sentence>& out) { out = whole.tokenize(text); });
  const Outcome b = run([&](std::vector<Sentence>& out) {
    std::istringstream in{std::string(text)};
    chunked.tokenize(
        in, [&](Sentence&& s) { out.push_back(std::move(s)); }, "<text>");
  });
  fuzz::check(a.error == b.error, "whole and chunked tokenizing fail differently: '" + a.error +
                                      "' vs '" + b.error + "'");
  fuzz::check(a.sentences == b.sentences, "whole and chunked tokenizing give other sentences");
  if (opt.replaceInvalid) fuzz::check(a.error.empty(), "replaceInvalid still failed: " + a.error);
  for (const Sentence& s : a.sentences) {
    fuzz::check(!s.empty(), "empty sentence");
    for (const std::string& t : s) {
      fuzz::check(!t.empty(), "empty token");
      // Tokens become vocabulary words, which word vector files separate by whitespace
      // (a space before a combining mark, for one, must not stay in the token).
      fuzz::check(t.find_first_of(" \t\n\r") == std::string::npos, "token with whitespace");
    }
  }
  return 0;
}
