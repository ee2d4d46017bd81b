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

#include "cli.hpp"
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
  bool dryRun = false;
  std::string memoryLimit;
  std::string kernel = TrainConfig{}.kernel == Kernel::Batched ? "batched" : "classic";
  TrainConfig config;
};

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

std::string bytesText(std::uint64_t bytes) {
  char buf[64];
  const double b = static_cast<double>(bytes), mib = 1024.0 * 1024;
  if (b >= 1024 * mib)
    std::snprintf(buf, sizeof buf, "%.2f GiB", b / (1024 * mib));
  else
    std::snprintf(buf, sizeof buf, "%.1f MiB", b / mib);
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

void run(const Options& o) {
  const auto start = std::chrono::steady_clock::now();
  // Decide the output format before training so a typo costs nothing.
  const VectorFormat format =
      o.format.empty() ? formatFromExtension(o.output) : parseVectorFormat(o.format);
  checkWritable(o.output, "output");
  if (!o.saveModel.empty()) checkWritable(o.saveModel, "--save-model");
  std::vector<std::string> inputs = o.corpus;
  if (!o.resume.empty()) inputs.push_back(o.resume);
  cli::refuseOutputOverInput(o.output, "output", inputs);
  if (format == VectorFormat::Npy)
    cli::refuseOutputOverInput(npyVocabularyPath(o.output), "output vocabulary", inputs);
  cli::refuseOutputOverInput(o.saveModel, "--save-model", inputs);

  TokenizerOptions tok;
  tok.lowercase = !o.keepCase;
  const CorpusSource corpus = CorpusSource::fromFiles(o.corpus, o.pretokenized, tok);

  if (!o.memoryLimit.empty()) ::setenv("POSVEC_MEMORY_LIMIT", o.memoryLimit.c_str(), 1);
  if (o.dryRun) {
    TrainConfig config = o.config;
    config.loss = o.hs ? Loss::HierarchicalSoftmax : Loss::NegativeSampling;
    if (!o.resume.empty()) throw ConfigError("--dry-run estimates a new training, not --resume");
    const MemoryEstimate e = estimateTrainingMemory(corpus, config);
    if (o.json) {
      nlohmann::json j;
      j["words"] = e.words;
      j["dim"] = config.dim;
      j["matrices_bytes"] = e.matrices;
      j["vocabulary_bytes"] = e.vocabulary;
      j["buffers_bytes"] = e.buffers;
      j["total_bytes"] = e.total();
      j["available_bytes"] = e.available;
      j["fits"] = e.total() <= e.available;
      std::cout << cli::jsonText(j) << "\n";
    } else {
      std::printf("vocabulary: %zu words, dim %zu\n", e.words, config.dim);
      std::printf("memory estimate: %llu bytes = %s (matrices %s, vocabulary %s, buffers %s)\n",
                  static_cast<unsigned long long>(e.total()), bytesText(e.total()).c_str(),
                  bytesText(e.matrices).c_str(), bytesText(e.vocabulary).c_str(),
                  bytesText(e.buffers).c_str());
      std::printf("available: %s (%s)\n", bytesText(e.available).c_str(),
                  e.total() <= e.available ? "fits" : "does NOT fit");
    }
    return;
  }

  const bool quiet = cli::globals().quiet;
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
    resumeTraining(model, corpus, o.config.epochs, observer);
  } else {
    TrainConfig config = o.config;
    config.loss = o.hs ? Loss::HierarchicalSoftmax : Loss::NegativeSampling;
    config.architecture = o.cbow ? Architecture::Cbow : Architecture::SkipGram;
    config.kernel = o.kernel == "batched" ? Kernel::Batched : Kernel::Classic;
    model = train(corpus, config, observer);
  }

  nlohmann::json summary;
  summary["words"] = model.words.size();
  summary["dim"] = model.input.cols();
  summary["epochs_done"] = model.epochsDone;
  summary["epoch_losses"] = model.epochLosses;
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
  sub->add_flag("--dry-run", opts->dryRun,
                "Count the corpus, print the memory training would need, and exit (nothing is "
                "trained or written)");
  sub->add_option("--memory-limit", opts->memoryLimit,
                  "Memory training may use, e.g. 8G (default: the physical memory; training "
                  "that would need more is refused before it starts)");
  sub->callback([opts] {
    // TrainConfig::validate's meanings, and resumeTraining's, with their flags.
    static const cli::FlagNames flags{{"dimension", "--dim"},
                                      {"window", "--window"},
                                      {"negative samples", "--negative"},
                                      {"subsampling threshold", "--sample"},
                                      {"initial learning rate", "--alpha"},
                                      {"final learning rate", "--min-alpha"},
                                      {"epochs", "--epochs"},
                                      {"minimum count", "--min-count"},
                                      {"threads", "--threads"}};
    cli::withFlagNames(flags, [&] { run(*opts); });
  });
});

}  // namespace
