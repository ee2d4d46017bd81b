// posvec study: option parsing over posvec::runStudy (study.hpp), which trains or
// loads the vectors, measures and, with --report, writes the report; this file
// only reads the flags, shows progress and prints the table or JSON.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "cli.hpp"
#include "posvec/error.hpp"
#include "posvec/formats.hpp"
#include "posvec/report.hpp"
#include "posvec/rope.hpp"
#include "posvec/study.hpp"

namespace {

using namespace posvec;

// The flags as text where the library takes typed values; defaults from StudyOptions.
struct Flags {
  StudyOptions study;
  std::vector<std::string> pairs;
  std::vector<std::string> encodings;
  std::string scale;
  std::vector<std::string> ropeConfigs;  // --rope-config: models for the comparison
  bool json = false;
};

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : " ") + i;
  return out;
}

// A progress line on stderr per stage of the study.
class StudyProgressLines {
 public:
  explicit StudyProgressLines(const StudyOptions& o) {
    char buf[32];
    std::string fractions;
    for (double f : o.sweepFractions) {
      std::snprintf(buf, sizeof buf, "%g%%", f * 100);
      fractions += (fractions.empty() ? "" : ", ") + std::string(buf);
    }
    sweep_ = "report: training sweep (epochs " +
             (o.sweepEpochs.empty() ? std::string()
                                    : std::to_string(o.sweepEpochs.front()) + "-" +
                                          std::to_string(o.sweepEpochs.back())) +
             " on " + fractions + " of the corpus)";
  }

  void operator()(const StudyProgress& p) {
    using Stage = StudyProgress::Stage;
    if (!line_) line_.emplace();
    char buf[200];
    switch (p.stage) {
      case Stage::ReadingCorpus:
        if (p.finished) break;
        line_->update("reading " + p.path + ": " + std::to_string(p.tokens) + " tokens");
        return;
      case Stage::Training:
        std::snprintf(buf, sizeof buf,
                      "training %s: epoch %d/%d  %3.0f%%  %.0fk words/s  loss %.4f",
                      p.model.c_str(), p.training.epoch, p.training.epochs,
                      p.training.fraction * 100, p.training.wordsPerSecond / 1000, p.training.loss);
        line_->update(buf);
        return;
      case Stage::Trained:
        std::snprintf(buf, sizeof buf, "training %s: %d epochs in %.2f s", p.model.c_str(),
                      p.epochs, p.seconds);
        line_->finish(buf);
        line_.reset();
        return;
      case Stage::TrainingSweep:
        if (p.finished) break;
        line_->update(sweep_, true);
        return;
      case Stage::WritingReport:
        return;
    }
    line_->finish();
    line_.reset();
  }

 private:
  std::optional<cli::ProgressLine> line_;
  std::string sweep_;
};

void run(const Flags& flags) {
  StudyOptions o = flags.study;
  if (!flags.pairs.empty()) {
    o.pairs.clear();
    for (const auto& p : flags.pairs) {
      try {
        o.pairs.push_back(parseWordAt(p));
      } catch (const ConfigError& e) {
        throw ConfigError(std::string("--pair: ") + e.what());
      }
    }
  }
  o.encodings.clear();
  for (const auto& e : flags.encodings) o.encodings.push_back(parseEncoding(e));
  o.scale = Scale::parse(flags.scale);
  if (!flags.ropeConfigs.empty()) o.comparePositions = true;
  if (cli::globals().parseOnly) {  // the option-parsing fuzzer: check, do no work
    o.validate();
    return;
  }
  for (const std::string& path : flags.ropeConfigs) {
    // Named by the file, without a config.json's directory-less name repeated.
    std::filesystem::path p(path);
    std::string name = p.stem().string();
    if (name == "config" && p.has_parent_path()) name = p.parent_path().filename().string();
    o.compareModels.push_back({name, readRopeConfig(path)});
  }
  if (!o.vectors.empty()) o.vectors = cli::seekableInput(o.vectors);
  if (!o.corpus.empty() && o.corpus != "-") {
    const std::string kind = binaryFileKind(o.corpus);
    if (!kind.empty())
      throw InputError("--corpus '" + o.corpus + "' is " + kind +
                       ", not text; to study existing vectors give them with --vectors");
  }
  auto lines = std::make_shared<StudyProgressLines>(o);
  StudyObserver observer;
  observer.progress = [lines](const StudyProgress& p) { (*lines)(p); };
  const StudyResults results = runStudy(o, observer);
  cli::noteBuiltWords(results.settings.builtWords);
  cli::writeOutput("-", flags.json ? summaryJson(results) : studyTable(results));
  if (!o.reportDir.empty() && !cli::globals().quiet)
    std::cerr << "report written to "
              << (std::filesystem::path(o.reportDir) / "index.html").string() << "\n";
}

static cli::Registrar reg(50, [](CLI::App& app) {
  auto flags = std::make_shared<Flags>();
  const StudyOptions defaults;
  for (Encoding e : defaults.encodings) flags->encodings.push_back(encodingName(e));
  flags->scale = toString(defaults.scale);
  std::vector<std::string> defaultPairs;
  for (const auto& w : defaults.pairs) defaultPairs.push_back(toString(w));
  auto* sub = app.add_subcommand(
      "study",
      "The black/brown study: word, positional and combined similarity of words placed in "
      "\"The black cat sat on the couch and the brown dog slept on the rug.\" (trains on the "
      "shipped "
      "corpus by default); --report DIR writes the positional-encoding experiments as HTML + SVG + "
      "JSON");
  auto* corpus = sub->add_option(
      "--corpus", flags->study.corpus,
      "Train " + std::to_string(StudyOptions::defaultDim()) + "-d skip-gram vectors (window " +
          std::to_string(defaults.trainConfig().window) + ", min-count " +
          std::to_string(defaults.trainConfig().minCount) +
          ") on this text file first (default: the shipped corpus)");
  auto* vectors = sub->add_option("--vectors", flags->study.vectors,
                                  "Use existing vectors (word2vec bin/text, .npy, model, or a "
                                  "fastText .bin, whose unknown placed words are built from "
                                  "character n-grams)");
  corpus->excludes(vectors);
  vectors->excludes(corpus);
  cli::addVectorLoadOptions(sub, flags->study.vectorsLoad);
  sub->add_option("--pair", flags->pairs,
                  "WORD:POSITION, repeatable; positions are the PE rows, 1-based in the sentence; "
                  "with more than two, all pairs are reported")
      ->default_str(join(defaultPairs));
  sub->add_option("--encoding", flags->encodings,
                  "Positional encodings to compare (book interleaved concatenated tutorial)")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_option("--dim", flags->study.dim,
                  "d_model: the dimension trained (must be even; with --vectors, their dimension)")
      ->default_str(std::to_string(StudyOptions::defaultDim()))
      ->check(CLI::Validator(
          [](std::string& v) {
            return v.find_first_not_of('0') == std::string::npos ? "d_model must be positive"
                                                                 : std::string();
          },
          "", "POSITIVE"))
      ->check(cli::notNegative());
  sub->add_option("--scale", flags->scale,
                  "Embedding scale before adding PE: sqrt (√d), none, or a number")
      ->capture_default_str();
  sub->add_flag("--json", flags->json,
                "Print JSON (word_similarity, positional_similarity, combined_similarity, "
                "pairs, settings) instead of the table");
  cli::addSettings(sub, kStudySettings, flags->study);
  sub->add_option("--rope-config", flags->ropeConfigs,
                  "A model's config.json whose rotary rule the position comparison adds, at its "
                  "own rotated size, rope_theta and context (repeatable; implies "
                  "--compare-positions)")
      ->allow_extra_args(false);
  sub->callback([flags] { run(*flags); });
});

}  // namespace
