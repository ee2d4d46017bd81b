// posvec study: the black/brown similarity study end to end (train or load
// vectors, word / positional / combined similarity) and, with --report, the
// positional-encoding experiments as an HTML page, SVG figures and results.json.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "cli.hpp"
#include "posvec/analysis.hpp"
#include "posvec/error.hpp"
#include "posvec/formats.hpp"
#include "posvec/io.hpp"
#include "posvec/report.hpp"
#include "posvec/tokenizer.hpp"
#include "posvec/trainer.hpp"

namespace {

using namespace posvec;

struct Options {
  std::string corpus, vectors, report;
  std::vector<std::string> pairs;
  std::vector<std::string> encodings = {"book", "interleaved"};
  std::size_t dim = 512;
  std::string scale = "sqrt";
  std::uint64_t seed = 1;
  int epochs = 5;
  int threads = 1;
  double base = 10000.0;
  bool json = false;
};

// Corpora up to this size also get the report's training sweep and the smaller
// d_model models of the decomposition (everything else is cheap at any size).
constexpr std::int64_t kSweepMaxTokens = 300000;

std::string defaultCorpus() {
  for (const char* p : {POSVEC_DEFAULT_CORPUS, POSVEC_INSTALLED_CORPUS})
    if (std::filesystem::is_regular_file(p)) return p;
  throw IoError(
      std::string("no --corpus or --vectors given and the shipped corpus is missing (looked at ") +
      POSVEC_DEFAULT_CORPUS + " and " + POSVEC_INSTALLED_CORPUS +
      "); pass --corpus FILE or --vectors FILE");
}

std::vector<Sentence> readCorpus(const std::string& path, cli::ProgressLine& progress) {
  std::ifstream probe;
  openForReading(path, probe);  // a clear IoError for a missing file or a directory
  std::vector<Sentence> sentences;
  Tokenizer tokenizer;
  std::size_t tokens = 0;
  tokenizer.tokenizeFile(path, [&](Sentence&& s) {
    tokens += s.size();
    if (!s.empty()) sentences.push_back(std::move(s));
    if (sentences.size() % 4096 == 0)
      progress.update("reading " + path + ": " + std::to_string(tokens) + " tokens");
  });
  if (sentences.empty())
    throw InputError("corpus '" + path + "' holds no words; give a text file with sentences");
  return sentences;
}

Embeddings trainOn(const std::vector<Sentence>& sentences, const TrainConfig& config,
                   const std::string& what) {
  cli::ProgressLine progress;
  TrainObserver observer;
  observer.progress = [&](const TrainProgress& p) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "training %s: epoch %d/%d  %3.0f%%  %.0fk words/s  loss %.4f",
                  what.c_str(), p.epoch, p.epochs, p.fraction * 100, p.wordsPerSecond / 1000,
                  p.loss);
    progress.update(buf);
  };
  const auto start = std::chrono::steady_clock::now();
  Embeddings e = embeddingsOf(train(CorpusSource::fromSentences(sentences), config, observer));
  char done[160];
  std::snprintf(done, sizeof done, "training %s: %d epochs in %.2f s", what.c_str(), config.epochs,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  progress.finish(done);
  return e;
}

void run(const Options& o, bool dimGiven) {
  if (!o.corpus.empty() && !o.vectors.empty())
    throw ConfigError(
        "--corpus and --vectors are exclusive: train from a corpus or use existing vectors");
  // Everything that can be refused is checked before any training starts.
  std::vector<WordAt> words;
  for (const auto& p : o.pairs.empty() ? std::vector<std::string>{"black:2", "brown:10"} : o.pairs)
    words.push_back(parseWordAt(p));
  if (words.size() < 2)
    throw ConfigError(
        "--pair: give at least two WORD:POSITION (e.g. --pair black:2 --pair brown:10)");
  ExperimentOptions ex;
  ex.words = words;
  ex.encodings.clear();
  for (const auto& e : o.encodings) ex.encodings.push_back(parseEncoding(e));
  if (ex.encodings.empty()) throw ConfigError("--encoding: give at least one encoding");
  ex.scale = Scale::parse(o.scale);
  ex.base = o.base;
  PositionalOptions check;
  check.dim = o.dim;
  check.base = o.base;
  check.validate();

  StudySettings settings;
  std::vector<Sentence> sentences;
  Embeddings embeddings;
  std::vector<Embeddings> smaller;
  TrainConfig config;
  if (!o.vectors.empty()) {
    if (cli::globals().parseOnly) return;
    embeddings = loadVectors(o.vectors);
    if (dimGiven && embeddings.dim() != o.dim)
      throw ConfigError("--dim " + std::to_string(o.dim) + " does not match the " +
                        std::to_string(embeddings.dim()) + "-d vectors in '" + o.vectors +
                        "' (leave --dim out with --vectors)");
    settings.source = o.vectors;
  } else {
    const std::string corpus = o.corpus.empty() ? defaultCorpus() : o.corpus;
    config.dim = o.dim;
    config.window = 5;
    config.minCount = 1;
    config.sample = 1e-3;
    config.architecture = Architecture::SkipGram;
    config.epochs = o.epochs;
    config.seed = o.seed;
    config.threads = o.threads;
    config.validate();
    if (cli::globals().parseOnly) return;
    {
      cli::ProgressLine progress;
      sentences = readCorpus(corpus, progress);
      progress.finish();
    }
    for (const auto& s : sentences) settings.corpusTokens += static_cast<std::int64_t>(s.size());
    const auto start = std::chrono::steady_clock::now();
    embeddings = trainOn(sentences, config, std::to_string(o.dim) + "-d");
    settings.trainSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    settings.source = corpus;
    settings.trained = true;
    settings.train = config;
  }
  for (const auto& w : words)
    if (!embeddings.find(w.word))
      throw InputError("--pair '" + toString(w) + "': the word '" + w.word +
                       "' is not in the vocabulary of " + settings.source + " (" +
                       std::to_string(embeddings.size()) + " words)");

  const bool sweep =
      !o.report.empty() && settings.trained && settings.corpusTokens <= kSweepMaxTokens;
  std::vector<const Embeddings*> extra;
  if (sweep) {
    for (std::size_t d : {64u, 128u, 256u, 512u})
      if (d < o.dim) {
        TrainConfig c = config;
        c.dim = d;
        smaller.push_back(trainOn(sentences, c, std::to_string(d) + "-d (decomposition)"));
      }
    for (const auto& e : smaller) extra.push_back(&e);
  }
  StudyResults results = runExperiments(embeddings, ex, extra);
  const std::string scaleName = results.settings.scaleName;
  const double scale = results.settings.scale;
  settings.dim = embeddings.dim();
  settings.vocabulary = embeddings.size();
  settings.base = o.base;
  settings.scaleName = scaleName;
  settings.scale = scale;
  results.settings = settings;
  if (sweep) {
    cli::ProgressLine progress;
    progress.update("report: training sweep (epochs 1-50 on 10%, 30%, 100% of the corpus)", true);
    results.training = trainingSweep(sentences, config, words[0], words[1], {1, 2, 5, 10, 20, 50},
                                     {0.1, 0.3, 1.0});
    progress.finish();
  }
  cli::writeOutput("-", o.json ? summaryJson(results) : studyTable(results));
  if (!o.report.empty()) {
    writeReport(results, o.report);
    if (!cli::globals().quiet)
      std::cerr << "report written to " << (std::filesystem::path(o.report) / "index.html").string()
                << "\n";
  }
}

static cli::Registrar reg(50, [](CLI::App& app) {
  auto opts = std::make_shared<Options>();
  auto* sub = app.add_subcommand(
      "study",
      "The black/brown study: word, positional and combined similarity of words placed in "
      "\"The black cat sat on the couch and the brown dog slept on the rug.\" (trains on the "
      "shipped "
      "corpus by default); --report DIR writes the positional-encoding experiments as HTML + SVG + "
      "JSON");
  auto* corpus = sub->add_option(
      "--corpus", opts->corpus,
      "Train 512-d skip-gram vectors (window 5, min-count 1) on this text file first "
      "(default: the shipped corpus)");
  auto* vectors = sub->add_option("--vectors", opts->vectors,
                                  "Use existing vectors (word2vec bin/text, .npy, model)");
  corpus->excludes(vectors);
  vectors->excludes(corpus);
  sub->add_option(
      "--pair", opts->pairs,
      "WORD:POSITION, repeatable (default black:2 brown:10); positions are the PE rows, 1-based "
      "in the sentence; with more than two, all pairs are reported");
  sub->add_option("--encoding", opts->encodings,
                  "Positional encodings to compare (book interleaved concatenated tutorial)")
      ->delimiter(',')
      ->capture_default_str();
  auto* dim = sub->add_option("--dim", opts->dim, "d_model: the dimension trained (must be even)")
                  ->capture_default_str();
  sub->add_option("--scale", opts->scale,
                  "Embedding scale before adding PE: sqrt (√d), none, or a number")
      ->capture_default_str();
  sub->add_option("--base", opts->base, "Base of the encoding's frequencies")
      ->capture_default_str();
  sub->add_option("--seed", opts->seed, "Training seed")->capture_default_str();
  sub->add_option("--epochs", opts->epochs, "Training epochs")->capture_default_str();
  sub->add_option("--threads", opts->threads,
                  "Training threads (0: all cores; 1 keeps the numbers reproducible)")
      ->capture_default_str();
  sub->add_flag("--json", opts->json,
                "Print JSON (word_similarity, positional_similarity, combined_similarity, "
                "pairs, settings) instead of the table");
  sub->add_option("--report", opts->report,
                  "Write index.html, one SVG per figure and results.json into this directory");
  sub->callback([opts, dim] { run(*opts, dim->count() > 0); });
});

}  // namespace
