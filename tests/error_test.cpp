// posvec::Error: messages that name settings by meaning, and where, so that each
// front end can spell them its own way.
#include "posvec/error.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <string>

using namespace posvec;

TEST_CASE("error: a message names settings by meaning, and a front end spells them", "[error]") {
  const InputError e(ErrorText("no word occurs at least 5 times; lower ")
                     << Setting{"minCount", "the minimum count"} << " or raise "
                     << Setting{"dim", "the dimension"} << ".");
  // Library users read the meaning.
  CHECK(std::string(e.what()) ==
        "no word occurs at least 5 times; lower the minimum count or raise the dimension.");
  REQUIRE(e.mentions().size() == 2);
  // "no word occurs at least 5 times; lower " is 39 characters, "the minimum count" 17.
  CHECK(e.mentions()[0].offset == 39);
  CHECK(e.mentions()[0].length == 17);
  CHECK(e.mentions()[0].setting == "minCount");
  CHECK(e.mentions()[1].offset == 39 + 17 + 10);
  CHECK(e.mentions()[1].setting == "dim");
  // A front end puts its spelling in their place, longer or shorter than the meaning;
  // a setting it does not know keeps its meaning.
  const std::map<std::string, std::string> flags{{"minCount", "--min-count"}};
  const auto spell = [&](const std::string& s) {
    const auto it = flags.find(s);
    return it == flags.end() ? std::string() : it->second;
  };
  CHECK(e.spelled(spell) == "no word occurs at least 5 times; lower --min-count or raise the dimension.");
  CHECK(e.spelled([](const std::string& s) { return s == "dim" ? "vector_size" : ""; }) ==
        "no word occurs at least 5 times; lower the minimum count or raise vector_size.");
  // Plain messages have no mentions and spell as they are.
  const ConfigError plain("dimension must be between 1 and 100000 (got 0)");
  CHECK(plain.mentions().empty());
  CHECK(plain.spelled(spell) == plain.what());
  // Copies (a rethrow, an exception_ptr) keep the mentions.
  const Error copy = e;
  CHECK(copy.spelled(spell) == e.spelled(spell));
}
