// posvec train: corpus files to word vectors (and optionally the full training
// state), or more epochs for a saved model with --resume.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "cli.hpp"
#include "posvec/distributed.hpp"
#include "posvec/error.hpp"
#include "posvec/formats.hpp"
#include "posvec/trainer.hpp"

namespace {

using namespace posvec;

struct Options {
  std::vector<std::string> corpus;
  std::string output;
  std::string format;
  std::string resume;
  std::string saveModel;
  bool pretokenized = false;
  bool hs = false;
  bool cbow = false;
  bool json = false;
  bool keepCase = false;
  std::string kernel = TrainConfig{}.kernel == Kernel::Batched ? "batched" : "classic";
  TrainConfig config;
  SyncOptions sync;
  std::string syncCombine = "sum";
};

// TrainConfig::validate's meanings, resumeTraining's and SyncOptions', with their flags.
const cli::FlagNames kFlags{{"dimension", "--dim"},
                            {"window", "--window"},
                            {"negative samples", "--negative"},
                            {"subsampling threshold", "--sample"},
                            {"initial learning rate", "--alpha"},
                            {"final learning rate", "--min-alpha"},
                            {"epochs", "--epochs"},
                            {"minimum count", "--min-count"},
                            {"threads", "--threads"},
                            {"words between synchronisations", "--sync-words"},
                            {"rows per synchronisation", "--sync-rows"}};

// Fails before hours of training, not after: the directory must exist and be writable.
void checkWritable(const std::string& path, const std::string& option) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw IoError("cannot write " + option + " '" + path + "': it is a directory");
  const fs::path p(path);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    throw IoError("cannot write " + option + " '" + path + "': directory '" + dir.string() +
                  "' does not exist");
  if (::access(dir.c_str(), W_OK) != 0)
    throw IoError("cannot write " + option + " '" + path + "': directory '" + dir.string() +
                  "' is not writable");
}

std::string humanCount(double n) {
  char buf[32];
  if (n >= 1e6)
    std::snprintf(buf, sizeof buf, "%.2fM", n / 1e6);
  else if (n >= 1e3)
    std::snprintf(buf, sizeof buf, "%.1fk", n / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.0f", n);
  return buf;
}

std::string clock(double seconds) {
  const auto s = static_cast<long>(std::max(0.0, seconds) + 0.5);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

// `cluster`: under mpirun (runOnCluster). Rank 0 reports and writes; errors
// before training are every rank's (`together`), later ones a single rank's.
void run(const Options& o, Cluster* cluster = nullptr, bool* together = nullptr) {
  const auto start = std::chrono::steady_clock::now();
  const bool writer = !cluster || cluster->rank() == 0;
  VectorFormat format{};
  CorpusSource corpus;
  auto check = [&] {
    // Decide the output format before training so a typo costs nothing.
    format = o.format.empty() ? formatFromExtension(o.output) : parseVectorFormat(o.format);
    if (writer) {
      checkWritable(o.output, "output");
      if (!o.saveModel.empty()) checkWritable(o.saveModel, "--save-model");
    }
    std::vector<std::string> inputs = o.corpus;
    if (!o.resume.empty()) inputs.push_back(o.resume);
    cli::refuseOutputOverInput(o.output, "output", inputs);
    if (format == VectorFormat::Npy)
      cli::refuseOutputOverInput(npyVocabularyPath(o.output), "output vocabulary", inputs);
    cli::refuseOutputOverInput(o.saveModel, "--save-model", inputs);

    TokenizerOptions tok;
    tok.lowercase = !o.keepCase;
    corpus = CorpusSource::fromFiles(o.corpus, o.pretokenized, tok);
    if (!cluster) return;
    if (o.resume.empty()) o.config.validate();
    o.sync.validate();
    corpus = cluster->share(corpus);
  };
  if (!cluster) {
    check();
  } else {
    std::string error;
    int kind = 1;
    try {
      cli::withFlagNames(kFlags, check);
    } catch (const ConfigError& e) {
      error = e.what(), kind = 2;
    } catch (const IoError& e) {
      error = e.what(), kind = 3;
    } catch (const FormatError& e) {
      error = e.what(), kind = 4;
    } catch (const InputError& e) {
      error = e.what(), kind = 5;
    }
    cluster->agree(error, kind);
    *together = false;
  }

  const bool quiet = cli::globals().quiet || !writer;
  auto progressLine = std::make_shared<cli::ProgressLine>();
  TrainObserver observer;
  if (!quiet) {
    observer.log = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
    observer.progress = [progressLine](const TrainProgress& p) {
      char buf[200];
      std::snprintf(buf, sizeof buf,
                    "epoch %d/%d  %5.1f%%  %s words/s  alpha %.5f  loss %.4f  ETA %s", p.epoch,
                    p.epochs, 100 * p.fraction, humanCount(p.wordsPerSecond).c_str(), p.alpha,
                    p.loss, clock(p.etaSeconds).c_str());
      progressLine->update(buf);
    };
  }
  int epochs = 0;
  observer.epochEnd = [progressLine, quiet, &epochs](const EpochReport& r) {
    ++epochs;
    if (quiet) return;
    char buf[200];
    std::snprintf(buf, sizeof buf, "epoch %d done: loss %.4f, %s words in %.1f s (%s words/s)",
                  r.epoch, r.loss, humanCount(static_cast<double>(r.words)).c_str(), r.seconds,
                  humanCount(r.seconds > 0 ? static_cast<double>(r.words) / r.seconds : 0).c_str());
    progressLine->finish(buf);
  };

  ModelState model;
  if (!o.resume.empty()) {
    model = loadModel(o.resume);
    // Only the thread count may change when resuming; the rest is the model's.
    TrainConfig stored = TrainConfig::deserialize(model.config);
    stored.threads = o.config.threads;
    model.config = stored.serialize();
    if (cluster)
      resumeDistributed(*cluster, model, corpus, o.config.epochs, o.sync, observer);
    else
      resumeTraining(model, corpus, o.config.epochs, observer);
  } else {
    TrainConfig config = o.config;
    config.loss = o.hs ? Loss::HierarchicalSoftmax : Loss::NegativeSampling;
    config.architecture = o.cbow ? Architecture::Cbow : Architecture::SkipGram;
    config.kernel = o.kernel == "batched" ? Kernel::Batched : Kernel::Classic;
    model = cluster ? trainDistributed(*cluster, corpus, config, o.sync, observer)
                    : train(corpus, config, observer);
  }
  if (!writer) return;  // every rank holds the combined model; rank 0 writes it

  nlohmann::json summary;
  summary["words"] = model.words.size();
  summary["dim"] = model.input.cols();
  summary["epochs_done"] = model.epochsDone;
  summary["epoch_losses"] = model.epochLosses;
  if (cluster) summary["ranks"] = cluster->size();
  if (!o.saveModel.empty()) saveModel(model, o.saveModel);
  if (format == VectorFormat::Model) {
    saveModel(model, o.output);
  } else {
    // Hand the matrix over instead of copying it: peak memory stays at the two matrices.
    model.output = MatrixF();
    const Embeddings vectors(std::move(model.words), std::move(model.input),
                             std::move(model.counts));
    saveVectors(vectors, o.output, format);
  }

  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (o.json) {
    nlohmann::json j = summary;
    j["output"] = o.output;
    j["format"] = formatName(format);
    j["seconds"] = seconds;
    if (!o.saveModel.empty()) j["model"] = o.saveModel;
    std::cout << cli::jsonText(j) << "\n";
  } else if (!quiet) {
    std::fprintf(stderr, "wrote %zu x %ld vectors to %s (%s) in %.1f s\n",
                 summary["words"].get<std::size_t>(), summary["dim"].get<long>(), o.output.c_str(),
                 formatName(format).c_str(), seconds);
  }
}

// Everything but the thread count must match on every rank (threads may differ
// between machines).
std::string optionLines(const Options& o) {
  std::ostringstream s;
  for (const auto& c : o.corpus) s << "corpus=" << c << "\n";
  s << "output=" << o.output << "\nformat=" << o.format << "\nresume=" << o.resume
    << "\nsave-model=" << o.saveModel << "\npretokenized=" << o.pretokenized << "\nhs=" << o.hs
    << "\ncbow=" << o.cbow << "\njson=" << o.json << "\nkeep-case=" << o.keepCase
    << "\nkernel=" << o.kernel << "\nsync-words=" << o.sync.syncWords
    << "\nsync-rows=" << o.sync.syncRows << "\nsync-combine=" << o.syncCombine << "\n";
  std::istringstream config(o.config.serialize());
  for (std::string line; std::getline(config, line);)
    if (line.rfind("threads=", 0) != 0) s << line << "\n";
  return s.str();
}

int exitCodeOf(const std::exception& e) {
  if (dynamic_cast<const ConfigError*>(&e)) return static_cast<int>(ExitCode::Usage);
  if (dynamic_cast<const IoError*>(&e)) return static_cast<int>(ExitCode::Io);
  if (dynamic_cast<const FormatError*>(&e)) return static_cast<int>(ExitCode::Format);
  if (dynamic_cast<const InputError*>(&e)) return static_cast<int>(ExitCode::Input);
  return static_cast<int>(ExitCode::Failure);
}

// Under mpirun. Errors every rank met together (different options, a missing
// file, an unwritable output) are reported once, by rank 0, and every rank ends
// normally; an error of one rank during training is printed by that rank with
// its number and ends the whole job (the others may wait in a collective).
void runOnCluster(Options o) {
  o.sync.combine =
      o.syncCombine == "average" ? SyncOptions::Combine::Average : SyncOptions::Combine::SumChanges;
  std::optional<Cluster> cluster;
  cluster.emplace();
  bool together = true;
  try {
    cluster->requireSameOptions(optionLines(o));
    run(o, &*cluster, &together);
  } catch (const std::exception& e) {
    if (!together) {
      std::fprintf(stderr, "posvec: error: %s\n", cluster->tag(e.what()).c_str());
      std::fflush(stderr);
      cluster->abort(exitCodeOf(e));
    }
    // Rank 0 reports and sets the job's exit code; the others end quietly and
    // successfully, so mpirun does not cut rank 0 short for their exit status.
    if (cluster->rank() == 0) throw;
    cluster.reset();
    std::fflush(nullptr);
    std::_Exit(0);
  }
}

posvec::cli::Registrar reg(20, [](CLI::App& app) {
  auto opts = std::make_shared<Options>();
  auto* sub = app.add_subcommand(
      "train", "Train word vectors (skip-gram or CBOW, negative sampling or hierarchical softmax)");
  TrainConfig& c = opts->config;
  sub->add_option("corpus", opts->corpus,
                  "Corpus files: raw text, or whitespace-split lines "
                  "with --pretokenized (\"-\" reads stdin)")
      ->required();
  sub->add_option("-o,--output", opts->output,
                  "Output file (.bin, .txt/.vec, .npy, .posvec = full-state model)")
      ->required();
  sub->add_option("--format", opts->format,
                  "Output format: bin, text, npy or model (default: from the extension)")
      ->check(CLI::IsMember({"bin", "text", "txt", "vec", "npy", "model"}));
  sub->add_flag("--pretokenized", opts->pretokenized,
                "Corpus is one sentence a line, tokens split on whitespace (as word2vec.c reads)");
  sub->add_flag("--keep-case", opts->keepCase, "Raw text: do not lowercase");
  sub->add_option("--dim", c.dim, "Vector dimension")
      ->capture_default_str()
      ->check(cli::notNegative());
  sub->add_option("--window", c.window, "Maximum context window (shrunk at random per word)")
      ->capture_default_str();
  sub->add_option("--negative", c.negative, "Noise words per positive (negative sampling)")
      ->capture_default_str();
  sub->add_flag("--hs", opts->hs,
                "Hierarchical softmax (Huffman tree) instead of negative sampling");
  sub->add_flag("--cbow", opts->cbow, "CBOW instead of skip-gram (try --alpha 0.05)");
  sub->add_option("--sample", c.sample, "Subsampling threshold for frequent words (0: off)")
      ->capture_default_str();
  sub->add_option("--alpha", c.alpha, "Initial learning rate")->capture_default_str();
  sub->add_option("--min-alpha", c.minAlpha, "Final learning rate (linear decay over all epochs)")
      ->capture_default_str();
  sub->add_option("--epochs", c.epochs, "Epochs (with --resume: how many more)")
      ->capture_default_str();
  sub->add_option("--min-count", c.minCount, "Ignore words rarer than this")->capture_default_str();
  sub->add_option("--max-vocab", c.maxVocab, "Keep at most this many words (0: no limit)")
      ->capture_default_str()
      ->check(cli::notNegative());
  sub->add_option("--threads", c.threads, "Training threads (0: all cores)")->capture_default_str();
  sub->add_option("--seed", c.seed, "Random seed (one thread: same seed, same bits)")
      ->capture_default_str();
  sub->add_option("--kernel", opts->kernel,
                  "Training kernel for skip-gram with negative sampling: batched (negatives "
                  "shared by a window's contexts, several times faster) or classic (word2vec.c's "
                  "per-pair updates); CBOW and --hs always use classic")
      ->check(CLI::IsMember({"classic", "batched"}))
      ->capture_default_str();
  auto* resume = sub->add_option("--resume", opts->resume,
                                 "Continue a full-state model (.posvec) for --epochs more epochs, "
                                 "with the schedule it would have had");
  for (const char* name :
       {"--dim", "--window", "--negative", "--hs", "--cbow", "--sample", "--alpha", "--min-alpha",
        "--min-count", "--max-vocab", "--seed", "--kernel"})
    resume->excludes(sub->get_option(name));
  sub->add_option("--save-model", opts->saveModel,
                  "Also save the full training state (for --resume) to this file");
  sub->add_flag("--json", opts->json, "Print a JSON summary (losses, sizes, time) on stdout");
  sub->add_option("--sync-words", opts->sync.syncWords,
                  "Under mpirun: words each rank trains between two synchronisations of the "
                  "most frequent rows (all rows are combined after every epoch)")
      ->capture_default_str();
  sub->add_option("--sync-rows", opts->sync.syncRows,
                  "Under mpirun: how many of the most frequent words' rows those "
                  "synchronisations cover (0: all)")
      ->capture_default_str();
  sub->add_option("--sync-combine", opts->syncCombine,
                  "Under mpirun: how the ranks' rows are combined: sum (every rank's change since "
                  "the last synchronisation, as one process would apply them) or average")
      ->check(CLI::IsMember({"sum", "average"}))
      ->capture_default_str();
  sub->callback([opts] {
    cli::withFlagNames(kFlags, [&] {
      if (Cluster::launched())
        runOnCluster(*opts);
      else
        run(*opts);
    });
  });
});

}  // namespace
