// The command line as a whole (tools/posvec/posvec.cpp): "-" for every file argument,
// one spelling per option across commands, help and unknown commands.
#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.hpp"

using posvec::test::quote;
using posvec::test::readText;
using posvec::test::runCli;
using posvec::test::RunResult;
using posvec::test::TempDir;
using posvec::test::writeText;

namespace {

// a = (1, 0), b = (0.8, 0.6), c = (0, 1): cos(a, b) = 0.8, cos(b, c) = 0.6.
const char* kVectors = "3 2\na 1 0\nb 0.8 0.6\nc 0 1\n";

// The words of word2vec text output, in order, after checking its header.
std::vector<std::string> wordsOf(const std::string& text, std::size_t dim) {
  std::istringstream in(text);
  std::size_t v = 0, d = 0;
  in >> v >> d;
  CHECK(d == dim);
  std::vector<std::string> words;
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) words.push_back(line.substr(0, line.find(' ')));
  CHECK(words.size() == v);
  return words;
}

std::set<std::string> setOf(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }

const std::string kTrain = "-q train --min-count 1 --dim 4 --epochs 1 -t 1 --seed 7 ";

}  // namespace

TEST_CASE("cli: an unknown command suggests the closest one", "[cli]") {
  const RunResult typo = runCli("trian corpus.txt");
  CHECK(typo.status == 2);
  CHECK(typo.err ==
        "posvec: error: unknown command 'trian'; did you mean 'train'? (see posvec --help)\n");
  const RunResult british = runCli("-q tokenise x.txt");
  CHECK(british.status == 2);
  CHECK(british.err.find("did you mean 'tokenize'?") != std::string::npos);
  const RunResult far = runCli("frobnicate");
  CHECK(far.status == 2);
  CHECK(far.err.find("unknown command 'frobnicate'") != std::string::npos);
  CHECK(far.err.find("did you mean") == std::string::npos);
}

TEST_CASE("cli: help COMMAND shows that command's options", "[cli]") {
  const RunResult help = runCli("help train");
  CHECK(help.status == 0);
  CHECK(help.out.find("--min-count") != std::string::npos);
  CHECK(help.out.find("--no-punct") != std::string::npos);
  CHECK(help.out.find("--epochs") != std::string::npos);
  CHECK(help.out == runCli("train --help").out);
  const RunResult all = runCli("help");
  CHECK(all.status == 0);
  for (const char* command : {"tokenize", "train", "encode", "eval", "help"})
    CHECK(all.out.find(command) != std::string::npos);
  const RunResult typo = runCli("help simlar");
  CHECK(typo.status == 2);
  CHECK(typo.err.find("did you mean 'similar'?") != std::string::npos);
}

TEST_CASE("cli: '-' reads vector and sentence files from stdin", "[cli]") {
  TempDir dir;
  const std::string vec = dir.file("v.txt");
  writeText(vec, kVectors);
  const RunResult sim = runCli("similarity - a b", vec);
  INFO(sim.err);
  CHECK(sim.status == 0);
  CHECK(sim.out == "cosine(a, b) = 0.800000\n");
  // Messages name the file as the user did, never the temporary copy.
  const RunResult missing = runCli("similarity - a zebra", vec);
  CHECK(missing.status == 5);
  CHECK(missing.err == "posvec: error: unknown word 'zebra': not in '-' (3 words)\n");
  const std::string bad = dir.file("bad.txt");
  writeText(bad, "2 2\na 1 0\n");
  const RunResult truncated = runCli("similar - a", bad);
  CHECK(truncated.status == 4);
  CHECK(truncated.err.rfind("posvec: error: '<stdin>'", 0) == 0);
  CHECK(truncated.err.find("/proc/self") == std::string::npos);

  const std::string sentences = dir.file("s.txt");
  writeText(sentences, "a b\nc\n");
  const RunResult given = runCli("encode " + quote(vec) + " -s 'a b' -s c --json --scale none");
  const RunResult piped = runCli("encode " + quote(vec) + " -i - --json --scale none", sentences);
  INFO(piped.err);
  REQUIRE(given.status == 0);
  CHECK(piped.status == 0);
  CHECK(piped.out == given.out);
  const RunResult both = runCli("encode - -i -", sentences);
  CHECK(both.status == 2);
  CHECK(both.err.find("only one input can be '-'") != std::string::npos);
}

TEST_CASE("cli: encode and attend join the phrases of a table", "[cli][phrases]") {
  TempDir dir;
  const std::string vec = dir.file("v.txt");
  writeText(vec, "4 2\ni 1 0\nlove 0 1\nnew_york 1 1\ncity 0.5 0.5\n");
  const std::string table = dir.file("phrases.tsv");
  writeText(table,
            "# posvec phrases: min_count=5 threshold=10 scoring=default delimiter=_\n"
            "# connector_words:\nnew_york\t12\t250.5\n");
  // Without the table "new" is no word of the vectors; with it the sentence is 3 tokens.
  const RunResult without = runCli("encode " + quote(vec) + " -s 'I love New York' --json");
  CHECK(without.status != 0);
  CHECK(without.err.find("'new'") != std::string::npos);
  const RunResult with =
      runCli("encode " + quote(vec) + " -s 'I love New York' --json --phrases " + quote(table));
  INFO(with.err);
  REQUIRE(with.status == 0);
  CHECK(with.out.find("\"new_york\"") != std::string::npos);
  const RunResult same = runCli("encode " + quote(vec) + " -s 'i love new_york' --json");
  REQUIRE(same.status == 0);
  CHECK(with.out == same.out);
  const RunResult attended =
      runCli("attend " + quote(vec) + " -s 'I love New York' --json --phrases " + quote(table));
  INFO(attended.err);
  REQUIRE(attended.status == 0);
  const RunResult attendedSame = runCli("attend " + quote(vec) + " -s 'i love new_york' --json");
  CHECK(attended.out == attendedSame.out);
  // Not a table: one line naming the file.
  const RunResult bad = runCli("encode " + quote(vec) + " -s 'a' --phrases " + quote(vec));
  CHECK(bad.status != 0);
  CHECK(bad.err.find("phrase table") != std::string::npos);
  CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
}

TEST_CASE("cli: train -o - streams the vectors to stdout", "[cli]") {
  TempDir dir;
  const std::string corpus = dir.file("c.txt");
  writeText(corpus, "x y z\ny z\nz x y\n");
  const RunResult file =
      runCli(kTrain + "--pretokenized " + quote(corpus) + " -o " + quote(dir.file("v.txt")));
  REQUIRE(file.status == 0);
  const RunResult out = runCli(kTrain + "--pretokenized " + quote(corpus) + " -o -");
  INFO(out.err);
  REQUIRE(out.status == 0);
  CHECK(out.out == readText(dir.file("v.txt")));
  CHECK(setOf(wordsOf(out.out, 4)) == std::set<std::string>{"x", "y", "z"});
  // Binary streams too; the full-state model as well, beside a vectors file.
  REQUIRE(runCli(kTrain + "--pretokenized " + quote(corpus) + " -o " + quote(dir.file("v.bin")) +
                 " --save-model " + quote(dir.file("m.posvec")))
              .status == 0);
  const RunResult bin = runCli(kTrain + "--pretokenized " + quote(corpus) + " -o - --format bin");
  CHECK(bin.status == 0);
  CHECK(bin.out == readText(dir.file("v.bin")));
  const RunResult model = runCli(kTrain + "--pretokenized " + quote(corpus) + " -o " +
                                 quote(dir.file("w.bin")) + " --save-model -");
  CHECK(model.status == 0);
  CHECK(model.out == readText(dir.file("m.posvec")));
  // --resume - reads the model from stdin.
  const RunResult resumed =
      runCli("-q train --pretokenized " + quote(corpus) + " --resume - --epochs 1 -t 1 -o -",
             dir.file("m.posvec"));
  INFO(resumed.err);
  CHECK(resumed.status == 0);
  CHECK(setOf(wordsOf(resumed.out, 4)) == std::set<std::string>{"x", "y", "z"});
  // npy is two files: it cannot stream, and says so before training.
  const RunResult npy = runCli(kTrain + "--pretokenized " + quote(corpus) + " -o - --format npy");
  CHECK(npy.status == 2);
  CHECK(npy.err.find("npy cannot stream to standard output") != std::string::npos);
  const RunResult twice =
      runCli(kTrain + "--pretokenized " + quote(corpus) + " -o - --save-model -");
  CHECK(twice.status == 2);
}

TEST_CASE("cli: train takes the tokenizer's options under tokenize's names", "[cli]") {
  TempDir dir;
  const std::string corpus = dir.file("raw.txt");
  // Turkish lower-cases I to dotless ı (U+0131); other locales to i.
  writeText(corpus, "The Cat sat. Isik and the cat!\n");
  const auto words = [&](const std::string& flags) {
    const RunResult r = runCli(kTrain + flags + " " + quote(corpus) + " -o -");
    INFO(r.err);
    REQUIRE(r.status == 0);
    return setOf(wordsOf(r.out, 4));
  };
  CHECK(words("") == std::set<std::string>{"the", "cat", "sat", ".", "isik", "and", "!"});
  CHECK(words("--no-punct") == std::set<std::string>{"the", "cat", "sat", "isik", "and"});
  CHECK(words("--keep-case --no-punct") ==
        std::set<std::string>{"The", "Cat", "sat", "Isik", "and", "the", "cat"});
  CHECK(words("--locale tr --no-punct") ==
        std::set<std::string>{"the", "cat", "sat", "\xc4\xb1sik", "and"});
  // tokenize agrees, flag for flag.
  const RunResult tok = runCli("tokenize --locale tr --no-punct " + quote(corpus));
  CHECK(tok.out == "the cat sat\n\xc4\xb1sik and the cat\n");
}

TEST_CASE("cli: one spelling per option across commands", "[cli]") {
  TempDir dir;
  const std::string vec = dir.file("v.txt");
  writeText(vec, kVectors);
  const RunResult punct = runCli("encode " + quote(vec) + " -s 'a, b.' --no-punct --json");
  INFO(punct.err);
  CHECK(punct.status == 0);
  const RunResult old = runCli("encode " + quote(vec) + " -s 'a, b.' --no-punctuation --json");
  CHECK(old.status == 0);
  CHECK(old.out == punct.out);
  CHECK(runCli("help encode").out.find("--no-punctuation") == std::string::npos);
  // -t/--threads wherever there are threads.
  for (const char* command : {"tokenize", "train", "study"})
    CHECK(runCli(std::string("help ") + command).out.find("-t,--threads") != std::string::npos);
}

TEST_CASE("cli: train --subwords writes composed vectors, a resumable model and estimates the "
          "bucket rows",
          "[cli][subword]") {
  TempDir dir;
  const std::string corpus = dir.file("c.txt");
  std::string text;
  for (int i = 0; i < 30; ++i) text += "walk walked walking talk talked talking\n";
  writeText(corpus, text);
  const std::string common = kTrain + "--pretokenized --subwords --minn 2 --maxn 4 --bucket 100 " +
                             quote(corpus);
  const RunResult vec = runCli(common + " -o " + quote(dir.file("v.txt")) + " --save-model " +
                               quote(dir.file("m.posvec")));
  INFO(vec.err);
  REQUIRE(vec.status == 0);
  CHECK(setOf(wordsOf(readText(dir.file("v.txt")), 4)) ==
        std::set<std::string>{"walk", "walked", "walking", "talk", "talked", "talking"});
  // The model's vectors, written as text by `posvec convert`, are the composed ones.
  const RunResult resumed =
      runCli("-q train --pretokenized " + quote(corpus) + " --resume " +
             quote(dir.file("m.posvec")) + " --epochs 1 -t 1 -o " + quote(dir.file("r.txt")));
  INFO(resumed.err);
  CHECK(resumed.status == 0);
  // The training log names the subword settings.
  const RunResult logged = runCli(kTrain.substr(3) + "--pretokenized --subwords --bucket 100 " +
                                  quote(corpus) + " -o " + quote(dir.file("l.txt")));
  CHECK(logged.err.find("kernel subword (character n-grams of 3 to 6, 100 buckets)") !=
        std::string::npos);
  // Without --alpha, fastText's learning rate.
  CHECK(logged.err.find("alpha 0.05 -> 0.0001") != std::string::npos);
  // The estimate counts the bucket rows: (6 words + 100 buckets) input rows and 6
  // output rows of 4 floats.
  const RunResult dry = runCli(common + " -o " + quote(dir.file("d.txt")) + " --dry-run --json");
  REQUIRE(dry.status == 0);
  CHECK(nlohmann::json::parse(dry.out)["matrices_bytes"] == (6 + 100 + 6) * 4 * 4);
}

TEST_CASE("cli: train refuses bad subword settings with one line", "[cli][subword]") {
  TempDir dir;
  const std::string corpus = dir.file("c.txt");
  writeText(corpus, "x y z\ny z\n");
  const std::string head = kTrain + "--pretokenized " + quote(corpus) + " -o " +
                           quote(dir.file("v.txt")) + " --subwords ";
  const RunResult minn = runCli(head + "--minn 5 --maxn 3");
  CHECK(minn.status == 2);
  CHECK(minn.err ==
        "posvec: error: --minn: shortest character n-gram must be between 1 and the longest (3; "
        "got 5)\n");
  const RunResult bucket = runCli(head + "--bucket -1");
  CHECK(bucket.status == 2);
  CHECK(std::count(bucket.err.begin(), bucket.err.end(), '\n') == 1);
  CHECK(bucket.err.find("--bucket") != std::string::npos);
  const RunResult hs = runCli(head + "--hs");
  CHECK(hs.status == 2);
  CHECK(std::count(hs.err.begin(), hs.err.end(), '\n') == 1);
  CHECK(hs.err.find("hierarchical softmax with subwords is not available") != std::string::npos);
  // The n-gram options mean nothing without --subwords.
  const RunResult alone = runCli(kTrain + "--pretokenized " + quote(corpus) + " -o " +
                                 quote(dir.file("v.txt")) + " --minn 2");
  CHECK(alone.status != 0);
  CHECK(alone.err.find("--subwords") != std::string::npos);
  // Too little memory names the bucket count.
  const RunResult memory = runCli(head + "--memory-limit 1M");
  CHECK(memory.status == 2);
  CHECK(memory.err.find("for 3 words and 2000000 n-gram buckets x dim 4") != std::string::npos);
  CHECK(memory.err.find("or lower --dim or --bucket (now 2000000)") != std::string::npos);
}

TEST_CASE("cli: train --ns-exponent reaches the model and bad values get one line", "[cli]") {
  TempDir dir;
  const std::string corpus = dir.file("c.txt");
  writeText(corpus, "x y z\ny z\nz x y\n");
  const RunResult ok = runCli(kTrain + "--pretokenized " + quote(corpus) + " --ns-exponent 0.5 -o " +
                              quote(dir.file("v.txt")) + " --save-model " +
                              quote(dir.file("m.posvec")));
  INFO(ok.err);
  REQUIRE(ok.status == 0);
  // The stored configuration is text: 0.5 written with %.17g is "0.5".
  CHECK(readText(dir.file("m.posvec")).find("ns_exponent=0.5\n") != std::string::npos);
  const RunResult bad =
      runCli(kTrain + "--pretokenized " + quote(corpus) + " --ns-exponent 20 -o " +
             quote(dir.file("w.txt")));
  CHECK(bad.status == 2);
  CHECK(bad.err == "posvec: error: --ns-exponent: noise distribution exponent must be between -10 "
                   "and 10 (word2vec's is 0.75; got 20)\n");
}

TEST_CASE("cli: train --dry-run states about how large each output format will be", "[cli]") {
  TempDir dir;
  // 300 words, each 3 to 40 times: far from the formats' fixed headers.
  std::string text;
  for (int line = 0; line < 40; ++line) {
    for (int w = 0; w < 300; w += 1 + line % 5) text += "word" + std::to_string(w) + " ";
    text += "\n";
  }
  writeText(dir.file("c.txt"), text);
  const std::string common = "train " + quote(dir.file("c.txt")) + " --min-count 1 --dim 20 ";
  // Each estimate against the file the same training then writes: within 3 % (the text
  // format's printed values vary in length: 20 %).
  struct Case {
    std::string args, file, extra;
    double tolerance;
  };
  for (const Case& c :
       {Case{"-o " + quote(dir.file("a.bin")), "a.bin", "", 0.03},
        Case{"-o " + quote(dir.file("a.txt")), "a.txt", "", 0.2},
        Case{"-o " + quote(dir.file("a.npy")), "a.npy", "a.vocab", 0.03},
        Case{"-o " + quote(dir.file("a.posvec")), "a.posvec", "", 0.03},
        Case{"--subwords --bucket 500 -o " + quote(dir.file("s.bin")), "s.bin", "", 0.03}}) {
    INFO(c.args);
    const RunResult dry = runCli(common + c.args + " --dry-run --json");
    REQUIRE(dry.status == 0);
    const double estimate = nlohmann::json::parse(dry.out)["output_bytes"].get<double>();
    const RunResult text = runCli(common + c.args + " --dry-run");
    CHECK(text.out.find("output: about ") != std::string::npos);
    REQUIRE(runCli("-q " + common + c.args + " --epochs 1 -t 1").status == 0);
    double actual = static_cast<double>(std::filesystem::file_size(dir.file(c.file)));
    if (!c.extra.empty())
      actual += static_cast<double>(std::filesystem::file_size(dir.file(c.extra)));
    CHECK(std::abs(estimate - actual) <= c.tolerance * actual);
  }
}
