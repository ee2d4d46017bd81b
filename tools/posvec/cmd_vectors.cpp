// Query and evaluation commands on a word-vector file: similarity, similar,
// analogy, vector, eval. Any format posvec reads works (a fastText .bin too); it
// is detected from the content.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "cli.hpp"
#include "posvec/embeddings.hpp"
#include "posvec/error.hpp"
#include "posvec/evaluation.hpp"
#include "posvec/formats.hpp"
#include "posvec/subwords.hpp"
#include "posvec/word_lookup.hpp"

namespace posvec::cli {
namespace {

using nlohmann::json;

// The vectors a query command works on (loadLookupVectors), with the words it
// built from n-grams so far.
struct QueryVectors : LookupVectors {
  std::vector<std::string> built;
};

// `vocabulary`: compose the vocabulary's vectors of a fastText model (for searches).
QueryVectors loadQueryVectors(const std::string& path, const LoadOptions& load,
                              bool vocabulary = true) {
  QueryVectors q;
  static_cast<LookupVectors&>(q) = loadLookupVectors(seekableInput(path), load, vocabulary);
  return q;
}

// Throws InputError naming the file, with a case variant as a hint when there is one.
WordId requireWord(const Embeddings& e, const std::string& word, const std::string& path) {
  if (auto id = e.find(word)) return *id;
  std::string msg =
      "unknown word '" + word + "': not in '" + path + "' (" + std::to_string(e.size()) + " words)";
  const std::string up = upperCase(word);
  for (const auto& w : e.words())
    if (upperCase(w) == up) {
      msg += "; did you mean '" + w + "'?";
      break;
    }
  throw InputError(msg);
}

std::string fixed6(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6f", v);
  return buf;
}

// Display width of UTF-8 text, counted in code points (good enough for alignment).
std::size_t width(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string padRight(const std::string& s, std::size_t w) {
  return s + std::string(w > width(s) ? w - width(s) : 0, ' ');
}

std::string table(const std::vector<Neighbour>& rows) {
  std::size_t w = width("word");
  for (const auto& r : rows) w = std::max(w, width(r.word));
  std::string out = padRight("word", w) + "  similarity\n";
  for (const auto& r : rows) out += padRight(r.word, w) + "  " + fixed6(r.similarity) + "\n";
  return out;
}

json neighboursJson(const std::vector<Neighbour>& rows) {
  json a = json::array();
  for (const auto& r : rows) a.push_back({{"word", r.word}, {"similarity", r.similarity}});
  return a;
}

// The vector of `word`: its row, or with a subword model its n-gram vector (noted).
Eigen::RowVectorXf queryVector(QueryVectors& q, const std::string& word, const std::string& path) {
  if (q.builds(word)) addBuiltWord(q.built, word);
  if (auto v = q.vector(word)) return *v;
  requireWord(q.vectors, word, path);
  return {};
}

void noteBuilt(const QueryVectors& q) { noteBuiltWords(q.built); }

Eigen::RowVectorXf unit(const Eigen::RowVectorXf& v) {
  const float n = v.norm();
  return n > 0 ? Eigen::RowVectorXf(v / n) : v;
}

struct QueryOptions {
  std::string vectors;
  LoadOptions load;
  std::vector<std::string> words;
  std::size_t k = 10;
  std::size_t restrict = 0;
  bool json = false;
};

void addVectorsArg(CLI::App* sub, const std::shared_ptr<QueryOptions>& o) {
  sub->add_option("vectors", o->vectors, kVectorsHelp)->required();
  addVectorLoadOptions(sub, o->load);
}

static Registrar similarityReg(30, [](CLI::App& app) {
  auto* sub = app.add_subcommand("similarity", "Cosine similarity of two words");
  auto o = std::make_shared<QueryOptions>();
  addVectorsArg(sub, o);
  sub->add_option("words", o->words, "The two words (A B)")->required()->expected(2);
  sub->add_flag("--json", o->json, "Print JSON");
  sub->callback([o] {
    // Two words: a fastText model is opened for lookups (its rows read on demand), not
    // composed whole.
    QueryVectors q = loadQueryVectors(o->vectors, o->load, false);
    const Eigen::RowVectorXf a = queryVector(q, o->words[0], o->vectors),
                             b = queryVector(q, o->words[1], o->vectors);
    const double s = cosine(a.data(), b.data(), static_cast<std::size_t>(a.size()));
    noteBuilt(q);
    if (o->json) {
      writeOutput("-",
                  jsonText(json{{"a", o->words[0]}, {"b", o->words[1]}, {"similarity", s}}) + "\n");
    } else {
      writeOutput("-", "cosine(" + o->words[0] + ", " + o->words[1] + ") = " + fixed6(s) + "\n");
    }
  });
});

// posvec similar MODEL with no words: each line of standard input is a query (its words'
// mean, as on the command line), answered as soon as it is read, the model loaded once. A
// query with an unknown word gets its error line and the next is read; the command then
// fails with the count.
void similarFromInput(const QueryOptions& o) {
  QueryVectors q = loadQueryVectors(o.vectors, o.load);
  const Embeddings& e = q.vectors;
  std::string line;
  std::size_t queries = 0, failed = 0;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::vector<std::string> words;
    for (std::string w; in >> w;) words.push_back(w);
    if (words.empty()) continue;
    ++queries;
    try {
      std::vector<WordId> ids;
      Eigen::RowVectorXf sum = Eigen::RowVectorXf::Zero(static_cast<Eigen::Index>(e.dim()));
      for (const auto& w : words) {
        sum += unit(queryVector(q, w, o.vectors));
        if (auto id = e.find(w)) ids.push_back(*id);
      }
      const std::vector<Neighbour> rows = e.nearestTo(sum, o.k, ids);
      std::string out;
      if (o.json) {
        json j{{"query", words}, {"k", o.k}, {"neighbours", neighboursJson(rows)}};
        out = json(j).dump() + "\n";
      } else {
        out = "query: " + line + "\n" + table(rows) + "\n";
      }
      std::fwrite(out.data(), 1, out.size(), stdout);
      std::fflush(stdout);
    } catch (const InputError& err) {
      ++failed;
      std::fprintf(stderr, "posvec: error: query %zu: %s\n", queries, err.what());
    }
  }
  noteBuilt(q);
  if (failed > 0)
    throw InputError(std::to_string(failed) + " of " + std::to_string(queries) +
                     " queries could not be answered (each named above)");
}

static Registrar similarReg(31, [](CLI::App& app) {
  auto* sub = app.add_subcommand(
      "similar",
      "The k words nearest to a word by cosine similarity; with several words (and "
      "--negative), nearest to their combination, as gensim's most_similar(positive, negative)");
  auto o = std::make_shared<QueryOptions>();
  auto negative = std::make_shared<std::vector<std::string>>();
  addVectorsArg(sub, o);
  sub->add_option("words", o->words,
                  "The word, or several: the mean of their unit vectors (gensim's positive); "
                  "none: one query a line from standard input (as fastText's nn), the model "
                  "loaded once");
  sub->add_option("--negative", *negative,
                  "Words whose unit vectors are subtracted (gensim's negative): every word "
                  "up to the next option")
      ->allow_extra_args(true);
  sub->add_option("-k,--top", o->k, "How many neighbours")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  sub->add_flag("--json", o->json, "Print JSON");
  sub->callback([o, negative] {
    if (o->words.empty()) {
      if (!negative->empty())
        throw ConfigError("--negative needs the query's words on the command line");
      similarFromInput(*o);
      return;
    }
    QueryVectors q = loadQueryVectors(o->vectors, o->load);
    const Embeddings& e = q.vectors;
    std::vector<Neighbour> rows;
    if (o->words.size() == 1 && negative->empty()) {
      const Eigen::RowVectorXf v = queryVector(q, o->words[0], o->vectors);
      rows = q.built.empty() ? e.nearest(o->words[0], o->k) : e.nearestTo(v, o->k);
    } else {
      // gensim: the mean of +unit(positive) and -unit(negative); the mean's scale
      // does not change a cosine, so the sum does. The inputs in the vocabulary are
      // excluded; a fastText model builds the others from n-grams.
      std::vector<WordId> ids;
      Eigen::RowVectorXf sum = Eigen::RowVectorXf::Zero(static_cast<Eigen::Index>(e.dim()));
      auto add = [&](const std::string& w, float sign) {
        sum += sign * unit(queryVector(q, w, o->vectors));
        if (auto id = e.find(w)) ids.push_back(*id);
      };
      for (const auto& w : o->words) add(w, 1.0f);
      for (const auto& w : *negative) add(w, -1.0f);
      rows = e.nearestTo(sum, o->k, ids);
    }
    noteBuilt(q);
    if (o->json) {
      json j{{"k", o->k}, {"neighbours", neighboursJson(rows)}};
      if (o->words.size() == 1 && negative->empty())
        j["word"] = o->words[0];
      else
        j["positive"] = o->words, j["negative"] = *negative;
      writeOutput("-", jsonText(j) + "\n");
    } else {
      writeOutput("-", table(rows));
    }
  });
});

static Registrar analogyReg(32, [](CLI::App& app) {
  auto* sub = app.add_subcommand("analogy",
                                 "A is to B as C is to ?: the words nearest to B - A + C (3CosAdd "
                                 "on unit vectors, inputs excluded)");
  auto o = std::make_shared<QueryOptions>();
  addVectorsArg(sub, o);
  sub->add_option("words", o->words, "A B C")->required()->expected(3);
  sub->add_option("-k,--top", o->k, "How many answers")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  sub->add_option("--restrict", o->restrict, "Search only the N most frequent words (0: all)")
      ->capture_default_str()
      ->check(notNegative());
  sub->add_flag("--json", o->json, "Print JSON");
  sub->callback([o] {
    QueryVectors q = loadQueryVectors(o->vectors, o->load);
    std::vector<Eigen::RowVectorXf> v;
    for (const auto& w : o->words) v.push_back(queryVector(q, w, o->vectors));
    std::vector<Neighbour> rows;
    if (q.built.empty()) {
      rows = q.vectors.analogy(o->words[0], o->words[1], o->words[2], o->k, o->restrict);
    } else {
      // As Embeddings::analogy, with the built words' vectors: b - a + c on unit
      // vectors, the inputs that are in the vocabulary excluded.
      std::vector<WordId> exclude;
      for (const auto& w : o->words)
        if (auto id = q.vectors.find(w)) exclude.push_back(*id);
      rows = q.vectors.nearestTo(unit(v[1]) - unit(v[0]) + unit(v[2]), o->k, exclude, o->restrict);
    }
    noteBuilt(q);
    if (o->json) {
      writeOutput("-", jsonText(json{{"a", o->words[0]},
                                     {"b", o->words[1]},
                                     {"c", o->words[2]},
                                     {"k", o->k},
                                     {"restrict", o->restrict},
                                     {"answers", neighboursJson(rows)}}) +
                           "\n");
    } else {
      writeOutput(
          "-", o->words[0] + " : " + o->words[1] + " :: " + o->words[2] + " : ?\n" + table(rows));
    }
  });
});

// fastText's print-word-vectors: "word v1 ... vd" per word (values with %.6g).
std::string vectorLine(const std::string& word, const Eigen::RowVectorXf& v) {
  std::string line = word;
  char buf[32];
  for (Eigen::Index i = 0; i < v.size(); ++i) {
    std::snprintf(buf, sizeof buf, " %.6g", static_cast<double>(v[i]));
    line += buf;
  }
  return line + "\n";
}

static Registrar vectorReg(34, [](CLI::App& app) {
  auto* sub = app.add_subcommand(
      "vector",
      "Print 'word v1 ... vd' for each word, as fastText's print-word-vectors (words from stdin "
      "when none are given); with a fastText .bin any word has a vector");
  auto o = std::make_shared<QueryOptions>();
  addVectorsArg(sub, o);
  sub->add_option("words", o->words,
                  "The words (none: read whitespace-separated words from stdin)");
  sub->callback([o] {
    QueryVectors q = loadQueryVectors(o->vectors, o->load, false);
    auto one = [&](const std::string& w) {
      const Eigen::RowVectorXf v =
          q.subwords ? q.subwords->vector(w) : queryVector(q, w, o->vectors);
      return vectorLine(w, v);
    };
    if (!o->words.empty()) {
      std::string out;
      for (const auto& w : o->words) out += one(w);
      writeOutput("-", out);
      return;
    }
    // Line by line, so that a pipe gets each answer as soon as its line is read.
    std::string line;
    while (std::getline(std::cin, line)) {
      std::string out;
      std::size_t i = 0;
      while (i < line.size()) {
        while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
        std::size_t j = i;
        while (j < line.size() && !std::isspace(static_cast<unsigned char>(line[j]))) ++j;
        if (j > i) out += one(line.substr(i, j - i));
        i = j;
      }
      std::fwrite(out.data(), 1, out.size(), stdout);
      std::fflush(stdout);
    }
  });
});

struct EvalCliOptions {
  std::string vectors;
  LoadOptions load;
  std::string analogies;
  std::vector<std::string> pairs;
  std::size_t restrict = EvalOptions{}.restrictVocab;
  bool caseSensitive = false;
  bool json = false;
};

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", 100.0 * fraction);
  return buf;
}

// Where the evaluation sets come from, for messages about a missing one.
const char* kFetchEval =
    "tools/scripts/fetch-eval.sh in the posvec source tree downloads questions-words.txt, "
    "wordsim353.tsv and simlex999.txt from their publishers";

static Registrar evalReg(33, [](CLI::App& app) {
  auto* sub = app.add_subcommand("eval",
                                 "Analogy accuracy and word-pair correlations, with gensim's "
                                 "semantics (evaluate_word_analogies / pairs)");
  auto o = std::make_shared<EvalCliOptions>();
  sub->add_option("vectors", o->vectors, kVectorsHelp)->required();
  addVectorLoadOptions(sub, o->load);
  sub->add_option("--analogies", o->analogies,
                  "Analogy file (': section' lines, then 'a b c d'), e.g. questions-words.txt");
  sub->add_option(
      "--pairs", o->pairs,
      "Word-pair file ('w1<TAB>w2<TAB>score', '#' comments), e.g. wordsim353.tsv; repeatable");
  sub->add_option("--restrict", o->restrict,
                  "Use only the N most frequent words (gensim's restrict_vocab; 0: all)")
      ->capture_default_str()
      ->check(notNegative());
  sub->add_flag("--case-sensitive", o->caseSensitive,
                "Match words exactly (default: upper-case both sides, as gensim)");
  sub->add_flag("--json", o->json, "Print JSON");
  sub->callback([o] {
    if (o->analogies.empty() && o->pairs.empty())
      throw ConfigError(
          "eval: nothing to evaluate; give --analogies FILE and/or --pairs FILE "
          "(e.g. questions-words.txt, wordsim353.tsv, simlex999.txt: " +
          std::string(kFetchEval) + ")");
    // Before the vectors are read: a missing evaluation file costs nothing.
    std::vector<std::pair<std::string, std::string>> files;
    if (!o->analogies.empty()) files.emplace_back("--analogies", o->analogies);
    for (const auto& p : o->pairs) files.emplace_back("--pairs", p);
    for (const auto& [flag, file] : files)
      if (file != "-" && !std::filesystem::exists(file))
        throw IoError(flag + " '" + file + "' does not exist; " + kFetchEval);
    const Embeddings e = loadVectors(seekableInput(o->vectors), o->load);
    EvalOptions opts;
    opts.restrictVocab = o->restrict;
    opts.caseInsensitive = !o->caseSensitive;
    ProgressLine progress;
    opts.progress = [&](std::size_t done, std::size_t total) {
      progress.update("eval: " + std::to_string(done) + "/" + std::to_string(total) +
                      " analogy questions");
    };
    json out{{"vectors", o->vectors},
             {"words", e.size()},
             {"dim", e.dim()},
             {"restrict", o->restrict},
             {"case_insensitive", !o->caseSensitive}};
    std::ostringstream text;
    text << "vectors: " << o->vectors << " (" << e.size() << " words, dimension " << e.dim()
         << "); "
         << (o->restrict ? "the " + std::to_string(o->restrict) + " most frequent words"
                         : std::string("all words"))
         << ", " << (o->caseSensitive ? "case-sensitive" : "case-insensitive") << "\n";
    if (!o->analogies.empty()) {
      const AnalogyResult r = evaluateAnalogies(e, o->analogies, opts);
      progress.finish();
      json sections = json::array();
      std::size_t w = width("Total accuracy");
      for (const auto& s : r.sections) w = std::max(w, width(s.name));
      auto sectionJson = [](const AnalogySection& s) {
        return json{{"section", s.name},
                    {"correct", s.correct},
                    {"total", s.evaluated()},
                    {"accuracy", s.accuracy()},
                    {"skipped", s.skipped}};
      };
      auto row = [&](const AnalogySection& s) {
        char buf[128];
        std::snprintf(buf, sizeof buf, "  %8zu  %8zu  %8s  %8zu\n", s.correct, s.evaluated(),
                      percent(s.accuracy()).c_str(), s.skipped);
        return padRight(s.name, w) + buf;
      };
      text << "\nanalogies: " << o->analogies << "\n"
           << padRight("section", w) << "   correct     total  accuracy   skipped\n";
      for (const auto& s : r.sections) {
        sections.push_back(sectionJson(s));
        text << row(s);
      }
      text << row(r.total);
      text << "skipped " << r.total.skipped << " of " << r.questions << " questions ("
           << percent(r.oovPercent() / 100) << ") with a word outside the vocabulary";
      if (r.invalidLines) text << "; ignored " << r.invalidLines << " lines that are not 4 words";
      text << "\n";
      out["analogies"] = {{"file", o->analogies},           {"sections", sections},
                          {"total", sectionJson(r.total)},  {"questions", r.questions},
                          {"skipped", r.total.skipped},     {"oov_ratio_percent", r.oovPercent()},
                          {"invalid_lines", r.invalidLines}};
    }
    if (!o->pairs.empty()) {
      json pairs = json::array();
      text << "\n";
      for (const auto& file : o->pairs) {
        const WordPairResult r = evaluateWordPairs(e, file, opts);
        pairs.push_back({{"file", file},
                         {"spearman", r.spearman},
                         {"pearson", r.pearson},
                         {"pairs", r.pairs},
                         {"oov", r.oov},
                         {"oov_ratio_percent", r.oovPercent()},
                         {"invalid_lines", r.invalidLines}});
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "Spearman %.4f  Pearson %.4f  (%zu pairs, %zu out of vocabulary: %.1f%%)",
                      r.spearman, r.pearson, r.pairs, r.oov, r.oovPercent());
        text << "pairs: " << file << "  " << buf << "\n";
        if (r.invalidLines)
          text << "  ignored " << r.invalidLines << " lines that are not 'w1<TAB>w2<TAB>score'\n";
      }
      out["pairs"] = pairs;
    }
    writeOutput("-", o->json ? jsonText(out) + "\n" : text.str());
  });
});

}  // namespace

const char* const kVectorsHelp =
    "Word vectors: word2vec binary or text, .npy (+ .vocab), a posvec model or a fastText .bin "
    "(detected from the content; with a fastText .bin or a posvec model trained with --subwords, "
    "unknown words are built from character n-grams)";

void addBuiltWord(std::vector<std::string>& built, const std::string& word) {
  if (std::find(built.begin(), built.end(), word) == built.end()) built.push_back(word);
}

void noteBuiltWords(const std::vector<std::string>& built) {
  if (built.empty()) return;
  std::string line = "note: not in the vocabulary, built from character n-grams:";
  for (const auto& w : built) line += " " + w;
  std::fprintf(stderr, "%s\n", line.c_str());
}

void addVectorLoadOptions(CLI::App* sub, LoadOptions& options) {
  addSettings(sub, kLoadSettings, options);
}

}  // namespace posvec::cli
