// What a newcomer types wrong, and what the command line answers: mistyped options,
// word2vec.c's and gensim's spellings, CLI11's messages in a user's words, files of
// the wrong kind, evaluation files that are missing, training that trains nothing.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "test_util.hpp"

using posvec::test::quote;
using posvec::test::runCli;
using posvec::test::RunResult;
using posvec::test::TempDir;
using posvec::test::writeText;

namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The one error line of a refused command line (exit 2).
std::string usageError(const std::string& args) {
  const RunResult r = runCli(args);
  INFO(args << "\n" << r.err);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  return r.err;
}

void writeBytes(const std::string& path, const std::string& bytes) { writeText(path, bytes); }

}  // namespace

TEST_CASE("cli: a mistyped option gets the nearest option", "[cli]") {
  const std::string train = "train c.txt -o v.bin ";
  CHECK(has(usageError(train + "--size 10"), "unknown option '--size'; did you mean --dim?"));
  CHECK(has(usageError(train + "--iter 3"), "unknown option '--iter'; did you mean --epochs?"));
  CHECK(has(usageError(train + "--min_count 1"),
            "unknown option '--min_count'; did you mean --min-count?"));
  CHECK(has(usageError(train + "--epoch 3"), "unknown option '--epoch'; did you mean --epochs?"));
  CHECK(has(usageError(train + "--dims 10"), "unknown option '--dims'; did you mean --dim?"));
  CHECK(has(usageError(train + "--min-count=2 --windw 3"),
            "unknown option '--windw'; did you mean --window?"));
  // The command's own help, not the top-level one.
  CHECK(has(usageError(train + "--size 10"), "(posvec train --help lists the options)"));
  // Far from every option: no guess.
  const std::string far = usageError(train + "--frobnicate");
  CHECK(has(far, "unknown option '--frobnicate'"));
  CHECK_FALSE(has(far, "did you mean"));
  // Other commands too.
  CHECK(has(usageError("similar v.bin cat --topk 3"), "did you mean --top?"));
}

TEST_CASE("cli: gensim's parameter names get posvec's spelling", "[cli]") {
  const std::string train = "train c.txt -o v.bin ";
  CHECK(has(usageError(train + "--vector_size 50"), "did you mean --dim?"));
  CHECK(has(usageError(train + "--workers 4"), "did you mean --threads?"));
  CHECK(has(usageError(train + "--min_count 1"), "did you mean --min-count?"));
  CHECK(has(usageError(train + "--sg 0"), "did you mean --cbow"));
  CHECK(has(usageError(train + "--min_alpha 0.001"), "did you mean --min-alpha?"));
  CHECK(has(usageError(train + "--max_final_vocab 10"), "did you mean --max-vocab?"));
  // gensim's names that posvec spells the same are simply accepted (checked by parsing
  // up to the missing corpus file).
  const RunResult same = runCli("-q " + train + "--epochs 1 --negative 3 --window 2");
  CHECK(same.status == 3);
}

TEST_CASE("cli: word2vec.c's command line is answered in posvec's spelling", "[cli]") {
  const std::string err = usageError(
      "train -train c.txt -output v.bin -size 200 -window 8 -negative 25 -hs 0 -sample 1e-4 "
      "-threads 20 -binary 1 -iter 15 -min-count 3 -alpha 0.05 -cbow 1");
  CHECK(has(err, "word2vec.c's options"));
  CHECK(has(err,
            "posvec train c.txt -o v.bin --dim 200 --window 8 --negative 25 --sample 1e-4 "
            "--threads 20 --format bin --epochs 15 --min-count 3 --alpha 0.05 --cbow"));
  // -hs 1 and -cbow 0, -binary 0: the switches as word2vec.c's 0/1 mean them.
  const std::string hs =
      usageError("train -train c.txt -output v.txt -hs 1 -negative 0 -cbow 0 -binary 0 -size 20");
  CHECK(has(hs, "posvec train c.txt -o v.txt --hs --format text --dim 20\n"));
  // Not "Could not convert: --threads = rain" (CLI11 read -train as -t rain).
  CHECK_FALSE(has(err, "Could not convert"));
}

TEST_CASE("cli: subword options name the real conflict and the real range", "[cli]") {
  // Before: "--bucket expects a number" past 2^32 - 1, and "--minn needs --subwords"
  // beside --resume, which refuses --subwords.
  CHECK(has(usageError("train c.txt -o v.bin --subwords --bucket 1099511627776"),
            "--bucket: must be at most 4294967295 (got 1099511627776)"));
  const std::string resumed = usageError("train c.txt -o v.bin --resume m.posvec --minn 2");
  CHECK(has(resumed, "cannot be used together"));
  CHECK(has(resumed, "--minn"));
  CHECK_FALSE(has(resumed, "needs --subwords"));
  for (const char* option : {"--minn 2", "--maxn 5", "--bucket 10"})
    CHECK(has(usageError(std::string("train c.txt -o v.bin ") + option),
              "train: " + std::string(option).substr(0, std::string(option).find(' ')) +
                  " needs --subwords"));
}

TEST_CASE("cli: a word2vec.c command line translates to what word2vec.c trains", "[cli]") {
  // word2vec.c's main(): size 100, cbow 1 (and then alpha 0.05), binary 0 (text), and
  // -hs 1 keeps its default negative 5 (both output layers).
  const std::string plain = usageError("train -train c.txt -output v.bin");
  CHECK(has(plain, "posvec train c.txt -o v.bin --dim 100 --cbow --alpha 0.05 --format text\n"));
  const std::string sg = usageError("train -train c.txt -output v.bin -cbow 0 -binary 1");
  CHECK(has(sg, "posvec train c.txt -o v.bin --format bin --dim 100\n"));
  const std::string alpha = usageError("train -train c.txt -output v.bin -alpha 0.01 -size 8");
  CHECK(has(alpha, "posvec train c.txt -o v.bin --alpha 0.01 --dim 8 --cbow --format text"));
  const std::string hs = usageError("train -train c.txt -output v.bin -size 20 -hs 1");
  CHECK(has(hs, "posvec train c.txt -o v.bin --dim 20 --hs --cbow --alpha 0.05 --format text"));
  CHECK(has(hs, "-hs 1 beside -negative 5 trains both output layers"));
  const std::string hs3 = usageError("train -train c.txt -output v.bin -hs 1 -negative 3");
  CHECK(has(hs3, "-hs 1 beside -negative 3"));
  CHECK_FALSE(has(hs3, "--negative"));
  // With no command, as word2vec.c is run: not the help ("-hs" read as -h s), not
  // "no command given".
  for (const std::string line : {"-train c.txt -output v.bin -size 20 -hs 1",
                                  "-q -train c.txt -output v.bin -hs 1 -negative 0"}) {
    const RunResult r = runCli(line);
    INFO(line << "\n" << r.out << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.rfind("posvec: error: these are word2vec.c's options; in posvec's spelling: "
                      "posvec train c.txt -o v.bin",
                      0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}

TEST_CASE("cli: parser messages are in a user's words", "[cli]") {
  TempDir dir;
  const std::string vec = dir.file("v.txt");
  writeText(vec, "3 2\na 1 0\nb 0.8 0.6\nc 0 1\n");
  const std::string conv = usageError("train c.txt -o v.bin --threads rain");
  CHECK(has(conv, "train: --threads expects a number, got 'rain'"));
  const std::string missing = usageError("train c.txt");
  CHECK(has(missing, "train: missing option --output"));
  const std::string excl = usageError("train c.txt -o v.bin --resume m.posvec --dim 10");
  CHECK(has(excl, "cannot be used together"));
  const std::string count = usageError("similarity " + quote(vec) + " a");
  CHECK(has(count, "similarity: "));
  CHECK_FALSE(has(count, "required but received"));
  const std::string range = usageError("similar " + quote(vec) + " a --top 0");
  CHECK(has(range, "similar: --top must be between 1 and 1000000 (got 0)"));
  const std::string member = usageError("train c.txt -o v.bin --format rain");
  CHECK(has(member, "train: --format: 'rain' is not one of bin, text, txt, vec, npy, model"));
  const std::string value = usageError("similar " + quote(vec) + " a --top");
  CHECK(has(value, "similar: --top needs a value"));
  const std::string none = usageError("");
  CHECK(has(none, "no command given"));
  for (const std::string& e : {conv, missing, excl, count, none, range, member, value}) {
    CHECK(e.rfind("posvec: error: ", 0) == 0);
    CHECK(std::count(e.begin(), e.end(), '\n') == 1);
    CHECK_FALSE(has(e, "The following argument"));
    CHECK_FALSE(has(e, "(see posvec --help)"));
  }
}

TEST_CASE("cli: similar takes several words and --negative, as gensim's most_similar", "[cli]") {
  TempDir dir;
  const std::string vec = dir.file("v.txt");
  // a = (1, 0), b = (0.8, 0.6), c = (0, 1), d = (0.6, -0.8).
  writeText(vec, "4 2\na 1 0\nb 0.8 0.6\nc 0 1\nd 0.6 -0.8\n");
  // positive a, c: q = (1, 1); cos(q, b) = 1.4 / sqrt 2 = 0.989949, cos(q, d) = -0.2 / sqrt 2.
  const RunResult both = runCli("similar " + quote(vec) + " a c -k 2 --json");
  INFO(both.err);
  REQUIRE(both.status == 0);
  const auto p = nlohmann::json::parse(both.out);
  CHECK(p["positive"] == nlohmann::json::array({"a", "c"}));
  REQUIRE(p["neighbours"].size() == 2);
  CHECK(p["neighbours"][0]["word"] == "b");
  CHECK(p["neighbours"][0]["similarity"].get<double>() ==
        Approx(1.4 / std::sqrt(2.0)).margin(1e-6));
  CHECK(p["neighbours"][1]["word"] == "d");
  CHECK(p["neighbours"][1]["similarity"].get<double>() ==
        Approx(-0.2 / std::sqrt(2.0)).margin(1e-6));
  // positive b, negative a: q = (-0.2, 0.6), |q| = sqrt 0.4; c: 0.6 / |q| = 0.948683,
  // d: (-0.12 - 0.48) / |q| = -0.948683.
  const RunResult neg = runCli("similar " + quote(vec) + " b --negative a --json");
  INFO(neg.err);
  REQUIRE(neg.status == 0);
  const auto j = nlohmann::json::parse(neg.out);
  CHECK(j["positive"] == nlohmann::json::array({"b"}));
  CHECK(j["negative"] == nlohmann::json::array({"a"}));
  REQUIRE(j["neighbours"].size() == 2);
  CHECK(j["neighbours"][0]["word"] == "c");
  CHECK(j["neighbours"][0]["similarity"].get<double>() == Approx(0.948683).margin(1e-6));
  CHECK(j["neighbours"][1]["word"] == "d");
  CHECK(j["neighbours"][1]["similarity"].get<double>() == Approx(-0.948683).margin(1e-6));
  // --negative takes every word up to the next option, as its help's "TEXT ..." says:
  // q = b - a - d = (-0.8, 1.4), and only c is left: 1.4 / sqrt 2.6 = 0.868243 (with d
  // taken as positive it would be -0.2 / sqrt 0.2).
  const RunResult two = runCli("similar " + quote(vec) + " b --negative a d --json");
  INFO(two.err);
  REQUIRE(two.status == 0);
  const auto t = nlohmann::json::parse(two.out);
  CHECK(t["positive"] == nlohmann::json::array({"b"}));
  CHECK(t["negative"] == nlohmann::json::array({"a", "d"}));
  REQUIRE(t["neighbours"].size() == 1);
  CHECK(t["neighbours"][0]["word"] == "c");
  CHECK(t["neighbours"][0]["similarity"].get<double>() ==
        Approx(1.4 / std::sqrt(2.6)).margin(1e-6));
  // One word is the plain nearest-words query.
  const RunResult one = runCli("similar " + quote(vec) + " a -k 1");
  CHECK(one.out == "word  similarity\nb     0.800000\n");
}

TEST_CASE("cli: fastText models, gensim pickles and arrays are named for what they are", "[cli]") {
  TempDir dir;
  // fastText: int32 793712314 (0x2F4F16BA) little-endian, then the version 12, then
  // a model type of 0x01010101 (fastText's are 1 to 3).
  const std::string ft = dir.file("cc.en.300.bin");
  writeBytes(ft, std::string("\xBA\x16\x4F\x2F\x0C\x00\x00\x00", 8) + std::string(64, '\x01'));
  // A pickle of protocol 4, as gensim's save() writes.
  const std::string kv = dir.file("word2vec.kv");
  writeBytes(kv, std::string("\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00", 11) + "gensim");
  for (const char* extra : {"", " --no-header"}) {
    const RunResult f = runCli("similar " + quote(ft) + " cat" + extra);
    CHECK(f.status == 4);
    // fastText's .bin is read (docs/fasttext.md): this one's model type is nonsense.
    CHECK(has(f.err, "fastText model: unknown model type"));
    CHECK_FALSE(has(f.err, "no-header"));
    const RunResult p = runCli("similar " + quote(kv) + " cat" + extra);
    CHECK(p.status == 4);
    CHECK(has(p.err, "a Python pickle (a gensim .model or .kv file)"));
    CHECK(has(p.err, "save_word2vec_format"));
  }
}

TEST_CASE("cli: a binary file given as a corpus is called one", "[cli]") {
  TempDir dir;
  const std::string npy = dir.file("x.npy");
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }";
  header += std::string(63 - header.size() % 64, ' ') + "\n";
  const float values[4] = {1.5f, -2.0f, 0.25f, 3.0f};
  writeBytes(npy, std::string("\x93NUMPY\x01\x00", 8) +
                      std::string(1, static_cast<char>(header.size())) + std::string(1, '\0') +
                      header + std::string(reinterpret_cast<const char*>(values), 16));
  const RunResult t = runCli("-q train " + quote(npy) + " -o " + quote(dir.file("v.bin")));
  CHECK(t.status == 5);
  CHECK(has(t.err, "is a NumPy array (.npy), not text"));
  CHECK_FALSE(has(t.err, "invalid UTF-8"));
  // Vectors given to the study as its corpus: --vectors is what was meant.
  const std::string corpus = dir.file("c.txt");
  std::string text;
  for (int i = 0; i < 30; ++i) text += "the black cat and the brown dog sat on the rug .\n";
  writeText(corpus, text);
  const std::string bin = dir.file("v.bin");
  REQUIRE(runCli("-q train " + quote(corpus) + " --min-count 1 --dim 8 --epochs 1 -t 1 -o " +
                 quote(bin))
              .status == 0);
  const RunResult s = runCli("-q study --corpus " + quote(bin));
  CHECK(s.status == 5);
  CHECK(has(s.err, "is word vectors in word2vec's binary format, not text"));
  CHECK(has(s.err, "--vectors"));
  // Text with a NUL byte is still text.
  const std::string nul = dir.file("nul.txt");
  writeText(nul, text + std::string(1, '\0') + "the end .\n");
  CHECK(runCli("-q train " + quote(nul) + " --min-count 1 --dim 4 --epochs 1 -t 1 -o " +
               quote(dir.file("n.bin")))
            .status == 0);
}

TEST_CASE("cli: study --replace-invalid reads a Latin-1 corpus", "[cli]") {
  TempDir dir;
  const std::string latin1 = dir.file("latin1.txt");
  std::string text;
  for (int i = 0; i < 40; ++i)
    text += "The black cat sat on the couch and the brown dog slept in the caf\xE9.\n";
  writeText(latin1, text);
  const std::string args = "-q study --corpus " + quote(latin1) + " --dim 8 --epochs 1 --json";
  const RunResult strict = runCli(args);
  CHECK(strict.status == 5);
  CHECK(has(strict.err, "invalid UTF-8"));
  const RunResult replaced = runCli(args + " --replace-invalid");
  INFO(replaced.err);
  REQUIRE(replaced.status == 0);
  CHECK(nlohmann::json::parse(replaced.out)["settings"]["source"] == latin1);
}

TEST_CASE("cli: eval without its files says where to get them", "[cli]") {
  TempDir dir;
  const std::string vec = dir.file("v.txt");
  writeText(vec, "3 2\na 1 0\nb 0.8 0.6\nc 0 1\n");
  const RunResult none = runCli("eval " + quote(vec));
  CHECK(none.status == 2);
  CHECK(has(none.err, "tools/scripts/fetch-eval.sh"));
  const RunResult absent =
      runCli("eval " + quote(vec) + " --analogies " + quote(dir.file("questions-words.txt")));
  CHECK(absent.status == 3);
  CHECK(has(absent.err, "--analogies '" + dir.file("questions-words.txt") + "' does not exist"));
  CHECK(has(absent.err, "tools/scripts/fetch-eval.sh"));
}

TEST_CASE("cli: train warns when min-count keeps next to nothing", "[cli]") {
  TempDir dir;
  // "the" 6 times, "cat" 5 times, 40 words once: min-count 5 keeps 2 of 42 words,
  // 11 of 51 tokens.
  std::string text = "the cat the cat the cat the cat the cat the";
  for (int i = 0; i < 40; ++i) text += " w" + std::to_string(i);
  writeText(dir.file("c.txt"), text + "\n");
  const RunResult r =
      runCli("train " + quote(dir.file("c.txt")) + " --pretokenized --dim 4 --epochs 1 -t 1 -o " +
             quote(dir.file("v.txt")));
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(has(r.err, "posvec: warning: --min-count 5 kept 2 of 42 distinct words (11 of 51 tokens)"));
  CHECK(has(r.err, "lower --min-count"));
  // Global flags may follow the command.
  CHECK(runCli("train " + quote(dir.file("c.txt")) + " --pretokenized --dim 4 --epochs 1 -t 1 -o " +
               quote(dir.file("q.txt")) + " --quiet")
            .err.empty());
  // Everything kept: no warning.
  const RunResult fine = runCli("train " + quote(dir.file("c.txt")) +
                                " --pretokenized --min-count 1 --dim 4 --epochs 1 -t 1 -o " +
                                quote(dir.file("w.txt")));
  CHECK(fine.status == 0);
  CHECK_FALSE(has(fine.err, "warning"));
}

TEST_CASE("cli: an epoch that trained nothing reports its loss as not available", "[cli]") {
  TempDir dir;
  // "x" is the only word kept, once a sentence: no (centre, context) pair to predict.
  std::string text;
  for (int i = 0; i < 6; ++i) text += "x y" + std::to_string(i) + "\n";
  writeText(dir.file("c.txt"), text);
  const std::string args = "train " + quote(dir.file("c.txt")) +
                           " --pretokenized --min-count 5 --sample 0 --dim 4 --epochs 2 -t 1 -o " +
                           quote(dir.file("v.txt"));
  const RunResult r = runCli(args);
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(has(r.err, "epoch 1 done: loss n/a"));
  CHECK_FALSE(has(r.err, "loss 0.0000"));
  const RunResult j = runCli("-q " + args + " --json");
  REQUIRE(j.status == 0);
  const auto summary = nlohmann::json::parse(j.out);
  CHECK(summary["epoch_losses"] == nlohmann::json::parse("[null, null]"));
}

TEST_CASE("cli: an error quoting a typed line break is still one line", "[cli]") {
  // The option fuzzer's find: "--dim" given "-" and a newline was quoted back as is,
  // and the error took two lines.
  auto oneLine = [](const std::string& args, const std::string& part) {
    const std::string err = usageError(args);
    CHECK(std::count(err.begin(), err.end(), '\n') == 1);
    CHECK(err.rfind("posvec: error: ", 0) == 0);
    CHECK(has(err, part));
  };
  oneLine("study --dim " + quote("-\n"), "(got -\\n)");
  oneLine("train c.txt -o v.bin --di" + quote("\r\n") + "m 3", "'--di\\r\\nm'");
  oneLine("pe --encoding " + quote("book\x01\x7f"), "book\\x01\\x7f");
  // Tabs and UTF-8 stay as they are.
  oneLine("tr\xC3\xA4in", "unknown command 'tr\xC3\xA4in'");
  oneLine("pe --encoding " + quote("a\tb"), "a\tb");
}
