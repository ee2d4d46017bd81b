// The settings tables: each row's range, text and spellings do what the row says,
// the configuration text is what earlier versions wrote, and the docs' option table
// of `posvec train` names each flag with its default.
#include "posvec/settings.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "posvec/distributed.hpp"
#include "posvec/error.hpp"
#include "posvec/formats.hpp"
#include "posvec/positional.hpp"
#include "posvec/rope.hpp"
#include "posvec/setting_tables.hpp"
#include "posvec/train_config.hpp"
#include "test_util.hpp"

using namespace posvec;

namespace {

// A value of the row's type other than the default, inside its range (for a choice:
// another choice; for a bool: the other value).
template <typename S, typename T>
T otherValue(const SettingRow<S, T>& row, const S& defaults) {
  const T d = defaults.*(row.member);
  if constexpr (std::is_enum_v<T> || std::is_same_v<T, bool>) {
    if (!row.choices.empty()) {
      for (const auto& c : row.choices)
        if (!(c.value == d)) return c.value;
    }
    if constexpr (std::is_same_v<T, bool>) return !d;
    return d;
  } else if constexpr (std::is_floating_point_v<T>) {
    return d == 0 ? T(0.5) : d / 2;  // every double range here holds half its default
  } else {
    return d == 0 ? T(1) : static_cast<T>(d + 1);
  }
}

}  // namespace

TEST_CASE("settings: a training configuration's text is byte for byte what earlier versions wrote",
          "[settings]") {
  // Written by hand from the format of the model files posvec has written since
  // version 2 (the keys, their order, %.17g for doubles): a model file read back
  // must not change.
  CHECK(TrainConfig{}.serialize() ==
        "dim=512\nwindow=5\nnegative=5\nloss=ns\narchitecture=skipgram\nsample=0.001\n"
        "alpha=0.025000000000000001\nmin_alpha=0.0001\nepochs=5\nmin_count=5\nmax_vocab=0\n"
        "threads=0\nseed=1\nkernel=batched\ncombine=4\nblock_negatives=0\n");
  TrainConfig c;
  c.loss = Loss::HierarchicalSoftmax;
  c.architecture = Architecture::Cbow;
  c.kernel = Kernel::Classic;
  c.nsExponent = 0.5;
  c.shrinkWindows = false;
  c.subwords = true;
  c.minn = 2;
  c.bucket = 7;
  c.weights = WeightType::Fp16;
  c.memoryLimit = 12345;  // a property of the machine: never written
  c.deferRows = true;     // of the run: never written
  CHECK(c.serialize() ==
        "dim=512\nwindow=5\nnegative=5\nloss=hs\narchitecture=cbow\nsample=0.001\n"
        "alpha=0.025000000000000001\nmin_alpha=0.0001\nepochs=5\nmin_count=5\nmax_vocab=0\n"
        "threads=0\nseed=1\nkernel=classic\ncombine=4\nblock_negatives=0\nns_exponent=0.5\n"
        "shrink_windows=0\nsubwords=1\nminn=2\nmaxn=6\nbucket=7\nweights=fp16\n");
}

TEST_CASE("settings: every stored training setting reads back the value it writes",
          "[settings]") {
  const TrainConfig defaults;
  int rows = 0;
  forEachSetting(kTrainSettings, [&](const auto& row) {
    if (row.stored == Stored::Never) return;
    INFO(row.key);
    TrainConfig c;
    c.subwords = true;  // the n-gram rows are stored for subword models
    const auto value = otherValue(row, defaults);
    c.*(row.member) = value;
    const std::string text = c.serialize();
    CHECK(text.find(std::string(row.key) + "=") != std::string::npos);
    const TrainConfig back = TrainConfig::deserialize(text);
    CHECK(back.*(row.member) == value);
    ++rows;
  });
  CHECK(rows == 24);
  // A value that is not the setting's type names the key and the value.
  CHECK_THROWS_WITH(TrainConfig::deserialize("kernel=fast\n"),
                    "training config: 'kernel' has the invalid value 'fast'");
  CHECK_THROWS_WITH(TrainConfig::deserialize("bucket=4294967296\n"),
                    "training config: 'bucket' has the invalid value '4294967296'");
  CHECK_THROWS_WITH(TrainConfig::deserialize("alpha=nan\n"),
                    "training config: 'alpha' has the invalid value 'nan'");
  CHECK_THROWS_WITH(TrainConfig::deserialize("memoryLimit=1\n"),
                    "training config: unknown key 'memoryLimit' (written by a newer posvec?)");
}

TEST_CASE("settings: validate refuses a value just past either end of a row's range and names the "
          "setting",
          "[settings]") {
  // Hand-written ends (the documented ranges), checked against what validate() does.
  struct End {
    const char* name;
    double ok, bad;
  };
  const End ends[] = {{"dim", 1, 0},
                      {"dim", 100000, 100001},
                      {"window", 1000, 1001},
                      {"negative", 1000, 1001},
                      {"sample", 0, 1},
                      {"sample", 0.999, -0.001},
                      {"alpha", 10, 0},
                      {"epochs", 100000, 100001},
                      {"minCount", 1, 0},
                      {"threads", 4096, 4097},
                      {"threads", 0, -1},
                      {"combine", 1024, 1025},
                      {"blockNegatives", 0, -1},
                      {"nsExponent", -10, -10.5},
                      {"maxn", 64, 65}};  // bucket: any count, 0 included
  for (const End& end : ends) {
    bool found = false;
    forEachSetting(kTrainSettings, [&](const auto& row) {
      if (row.setting.name != end.name) return;
      using T = std::remove_cvref_t<decltype(TrainConfig{}.*(row.member))>;
      found = true;
      INFO(end.name << " " << end.ok << " / " << end.bad);
      TrainConfig c;
      c.subwords = true;
      c.*(row.member) = static_cast<T>(end.ok);
      CHECK_NOTHROW(c.validate());
      c.*(row.member) = static_cast<T>(end.bad);
      try {
        c.validate();
        FAIL("accepted");
      } catch (const ConfigError& e) {
        CHECK(e.about() == end.name);
        const std::string what = e.what();
        CHECK(what.rfind(std::string(row.setting.meaning) + " must be ", 0) == 0);
      }
    });
    CHECK(found);
  }
  // NaN passes no comparison and is refused.
  TrainConfig c;
  c.alpha = std::nan("");
  CHECK_THROWS_AS(c.validate(), ConfigError);
}

TEST_CASE("settings: a message about a setting puts each front end's spelling in front",
          "[settings]") {
  TrainConfig c;
  c.dim = 0;
  try {
    c.validate();
    FAIL("accepted");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "dimension must be between 1 and 100000 (got 0)");
    const auto flag = [](const std::string& s) { return s == "dim" ? "--dim" : ""; };
    CHECK(e.spelled(flag) == "--dim: dimension must be between 1 and 100000 (got 0)");
    CHECK(e.spelled([](const std::string&) { return ""; }) == e.what());
  }
}

namespace {

// The option tables of the sections of a docs page whose "## " heading holds
// `heading`: flag -> its default's cell ("| `--alpha`, `--min-alpha` | 0.025, 0.0001 |"
// gives --alpha -> 0.025 and --min-alpha -> 0.0001).
std::map<std::string, std::string> documentedDefaults(const std::string& page,
                                                      const std::string& heading) {
  std::ifstream in(test::sourcePath(page));
  REQUIRE(in);
  std::map<std::string, std::string> documented;
  bool inSection = false;  // from a matching "## " heading to the next "## "
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## ", 0) == 0) inSection = line.find(heading) != std::string::npos;
    if (!inSection || line.rfind("| `-", 0) != 0) continue;
    // The cells, split at the pipes that are not escaped ("`a\\|b`" stays whole).
    std::vector<std::string> cells{""};
    for (std::size_t k = 1; k < line.size(); ++k) {
      if (line[k] == '|' && line[k - 1] != '\\')
        cells.emplace_back();
      else
        cells.back() += line[k];
    }
    if (cells.size() < 3) continue;
    const std::string& flags = cells[0];
    const std::string& defaults = cells[1];
    std::vector<std::string> names, values;
    for (std::size_t at = flags.find('`'); at != std::string::npos;) {
      const auto close = flags.find('`', at + 1);
      if (close == std::string::npos) break;
      // "--combine B" -> --combine; "-t, --threads" -> --threads; "-s/--sentence" -> --sentence
      std::string cell = flags.substr(at + 1, close - at - 1);
      std::replace(cell.begin(), cell.end(), '/', ' ');
      std::stringstream words(cell);
      for (std::string word; words >> word;) {
        if (!word.empty() && word.back() == ',') word.pop_back();
        if (word.rfind("--", 0) == 0) {
          names.push_back(word);
          break;
        }
      }
      at = flags.find('`', close + 1);
    }
    std::stringstream parts(defaults);
    for (std::string v; std::getline(parts, v, ',');) values.push_back(v);
    for (std::size_t i = 0; i < names.size(); ++i)
      documented.emplace(names[i], names.size() == values.size() ? values[i] : defaults);
  }
  return documented;
}

// "`batched`" and " 0 (all cores)" stand for batched and 0; 1e-3 for 0.001.
bool sameDefault(std::string cell, const std::string& expected) {
  cell.erase(std::remove(cell.begin(), cell.end(), '`'), cell.end());
  const auto first = cell.find_first_not_of(' ');
  cell = first == std::string::npos ? "" : cell.substr(first);
  cell = cell.substr(0, cell.find(' '));
  if (cell == expected) return true;
  char* end = nullptr;
  const double a = std::strtod(cell.c_str(), &end);
  return !cell.empty() && *end == '\0' && a == std::strtod(expected.c_str(), nullptr);
}

// Checks that every row of `table` with a flag the command registers from the table
// is documented with the default of `s` (a switch: off). Returns the rows checked.
template <typename Table, typename S>
int checkDocumented(const Table& table, const S& s,
                    const std::map<std::string, std::string>& documented,
                    std::initializer_list<std::string_view> skip = {}) {
  int checked = 0;
  forEachSetting(table, [&](const auto& row) {
    if (row.spelled.flag.empty() || row.customFlag ||
        std::find(skip.begin(), skip.end(), row.setting.name) != skip.end())
      return;
    const std::string flag(row.spelled.flag);
    INFO(flag);
    const auto it = documented.find(flag);
    REQUIRE(it != documented.end());
    bool isSwitch = row.flagSwitch;
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(s.*(row.member))>, bool>)
      isSwitch = isSwitch || row.choices.empty();
    const std::string expected = isSwitch ? "off" : settingText(row, s);
    CHECK(sameDefault(it->second, expected));
    ++checked;
  });
  return checked;
}

}  // namespace

TEST_CASE("settings: the docs' option tables name every flag with the struct's default",
          "[settings][docs]") {
  const auto train = documentedDefaults("docs/cli.md", "posvec train`");
  CHECK(checkDocumented(kTrainSettings, TrainConfig{}, train) > 20);
  CHECK(checkDocumented(kSyncSettings, SyncOptions{}, train) == 7);
  CHECK(checkDocumented(kTokenizerSettings, TokenizerOptions{}, train,
                        {"chunkBytes", "tokenizerThreads"}) == 5);
  // tokenize uses every core unless told otherwise.
  TokenizerOptions tokenize;
  tokenize.threads = 0;
  CHECK(checkDocumented(kTokenizerSettings, tokenize,
                        documentedDefaults("docs/cli.md", "`posvec tokenize`")) == 7);
  // attend's --base and --encoding set the additive encoding too: its own flags.
  CHECK(checkDocumented(kAttentionSettings, AttentionOptions{},
                        documentedDefaults("docs/cli.md", "`posvec attend`"),
                        {"rotaryBase", "rotaryEncoding"}) == 9);
  CHECK(checkDocumented(kStudySettings, StudyOptions{},
                        documentedDefaults("docs/study.md", "## Options")) == 11);
  CHECK(checkDocumented(kPhraseSettings, PhraseOptions{},
                        documentedDefaults("docs/phrases.md", "## The rules")) == 6);
}

TEST_CASE("settings: a name belongs to one row of all the tables", "[settings]") {
  // Front ends look a message's setting up by name in every table: a name in two
  // tables would give one of them the other's flag or keyword.
  std::set<std::string> names;
  int rows = 0;
  forEachSettingsTable([&](const auto& table) {
    forEachSetting(table, [&](const auto& row) {
      INFO(row.setting.name);
      CHECK(names.insert(std::string(row.setting.name)).second);
      CHECK_FALSE(row.setting.meaning.empty());
      ++rows;
    });
  });
  CHECK(rows == static_cast<int>(names.size()));
  CHECK(rows > 80);  // the tables are all there
}

TEST_CASE("settings: every setting a library message names has a row", "[settings]") {
  // The names the library's sources give to messages, read from the sources (a
  // name with no row would reach the user as the bare meaning, and a typo in a
  // settingNamed() call would give an empty one).
  const std::regex named(
      R"re((?:Setting\{|settingNamed\(\w+, |StudyOptionError\(|about\()"(\w+)")re");
  std::map<std::string, std::string> found;  // name -> the file that names it
  for (const char* dir : {"src", "include/posvec"})
    for (const auto& entry : std::filesystem::recursive_directory_iterator(test::sourcePath(dir))) {
      if (!entry.is_regular_file()) continue;
      const std::string text = test::readText(entry.path().string());
      for (std::sregex_iterator m(text.begin(), text.end(), named), end; m != end; ++m)
        found.emplace((*m)[1].str(), entry.path().filename().string());
    }
  REQUIRE(found.size() > 30);
  for (const auto& [name, file] : found) {
    INFO(name << " (named in " << file << ")");
    CHECK(settingSpelling(name) != nullptr);
  }
}

TEST_CASE("settings: the tokenizer, attention and study ranges come from their rows",
          "[settings]") {
  // Each row's ends, read from the row, checked against the struct's own validate().
  const auto refused = [](const auto& check) -> std::string {
    try {
      check();
    } catch (const ConfigError& e) {
      return e.about() + ": " + e.what();
    }
    return "(accepted)";
  };
  TokenizerOptions t;
  t.chunkBytes = 0;
  CHECK(refused([&] { t.validate(); }) ==
        "chunkBytes: tokenizer chunk size must be between 1 and 1073741824 (got 0)");
  t.chunkBytes = std::size_t{1} << 30;
  t.threads = 1025;
  CHECK(refused([&] { t.validate(); }) ==
        "tokenizerThreads: tokenizer threads must be between 0 (all cores) and 1024 (got 1025)");
  t.threads = 1024;
  CHECK(refused([&] { t.validate(); }) == "(accepted)");
  AttentionOptions a;
  a.heads = 0;
  CHECK(refused([&] { a.validate(8); }) == "heads: the number of heads must be at least 1 (got 0)");
  StudyOptions st;
  st.vectors = "unused.bin";  // no training configuration checked
  st.alibiHeads = 4097;
  CHECK(refused([&] { st.validate(); }) ==
        "alibiHeads: ALiBi's head count must be between 1 and 4096 (got 4097)");
  st.alibiHeads = 4096;
  st.compareContext = 1;
  CHECK(refused([&] { st.validate(); }) ==
        "compareContext: the compared context must be between 2 and 1099511627776 (2^40 "
        "positions at most; got 1)");
  st.compareContext = std::int64_t{1} << 40;
  CHECK(refused([&] { st.validate(); }) == "(accepted)");
  try {
    st.compareFactor = 0.5;
    st.validate();
    FAIL("accepted");
  } catch (const StudyOptionError& e) {  // still the study's own error type
    CHECK(e.option() == "compareFactor");
  }
}

TEST_CASE("settings: the command line spells each table's settings by their rows",
          "[settings][cli]") {
  test::TempDir dir;
  test::writeText(dir.file("t.txt"), "The cat sat.\n");
  const auto tokenize =
      test::runCli("tokenize " + test::quote(dir.file("t.txt")) + " --chunk-size 0");
  CHECK(tokenize.status == 2);
  CHECK(tokenize.err ==
        "posvec: error: --chunk-size: tokenizer chunk size must be between 1 and 1073741824 "
        "(got 0)\n");
  const auto study = test::runCli("study --alibi-heads 4097");
  CHECK(study.status == 2);
  CHECK(study.err ==
        "posvec: error: --alibi-heads: ALiBi's head count must be between 1 and 4096 (got "
        "4097)\n");
  test::writeText(dir.file("v.txt"), "2 2\nthe 1 0\ncat 0 1\n");
  const auto attend =
      test::runCli("attend " + test::quote(dir.file("v.txt")) + " -s 'the cat' --heads 0");
  CHECK(attend.status == 2);
  CHECK(attend.err == "posvec: error: --heads: the number of heads must be at least 1 (got 0)\n");
  // A name that is an argument, not a member: the positions of `posvec pe`.
  const auto pe = test::runCli("pe --len 0 --dim 8");
  CHECK(pe.status == 2);
  CHECK(pe.err.rfind("posvec: error: --len: the number of positions must be at least 1", 0) == 0);
}

TEST_CASE("settings: the rotary and positional checks name their setting", "[settings]") {
  RopeConfig rope;
  rope.type = RopeType::Linear;
  rope.factor = 0.5;
  try {
    rope.validate();
    FAIL("accepted");
  } catch (const ConfigError& e) {
    CHECK(e.about() == "ropeFactor");
    CHECK(std::string(e.what()) == "rope_scaling.factor must be at least 1 (got 0.5)");
  }
  PositionalOptions pe;
  pe.dim = 7;
  try {
    pe.validate();
    FAIL("accepted");
  } catch (const ConfigError& e) {
    CHECK(e.about() == "dModel");
    CHECK(std::string(e.what()).rfind("d_model must be even", 0) == 0);
  }
}

TEST_CASE("settings: a row is a flag: --fixed-windows trains and stores unshrunk windows",
          "[settings][cli]") {
  test::TempDir dir;
  std::string corpus;
  for (int i = 0; i < 200; ++i) corpus += "the black cat sat on the mat and the brown dog slept\n";
  test::writeText(dir.file("c.txt"), corpus);
  const std::string common = "-q train " + test::quote(dir.file("c.txt")) +
                             " --pretokenized --min-count 1 --dim 8 --epochs 1 -t 1 -o ";
  const auto fixed = test::runCli(common + test::quote(dir.file("f.posvec")) + " --fixed-windows");
  REQUIRE(fixed.status == 0);
  const auto shrunk = test::runCli(common + test::quote(dir.file("s.posvec")));
  REQUIRE(shrunk.status == 0);
  const ModelState f = loadModel(dir.file("f.posvec"));
  const ModelState s = loadModel(dir.file("s.posvec"));
  CHECK(f.config.find("shrink_windows=0\n") != std::string::npos);
  CHECK(s.config.find("shrink_windows") == std::string::npos);
  CHECK_FALSE(TrainConfig::deserialize(f.config).shrinkWindows);
  // The same seed trains other pairs: the vectors differ.
  CHECK_FALSE(f.input.isApprox(s.input));
  // A resumed model keeps its windows.
  const auto resumed = test::runCli("train " + test::quote(dir.file("c.txt")) +
                                    " --resume " + test::quote(dir.file("f.posvec")) +
                                    " --fixed-windows -o " + test::quote(dir.file("g.bin")));
  CHECK(resumed.status == 2);
  CHECK(resumed.err.find("--fixed-windows and --resume cannot be used together") !=
        std::string::npos);
}
