// posvec train: corpus files to word vectors (and optionally the full training
// state), or more epochs for a saved model with --resume.
#include <unistd.h>

#include <algorithm>
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
#include "interrupt.hpp"
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
  std::string checkpointEvery;
  std::string saveVocab;
  std::string readVocab;
  bool replaceInvalid = false;
  bool epochsGiven = false;
  bool alphaGiven = false;
  bool pretokenized = false;
  bool hs = false;
  bool cbow = false;
  bool json = false;
  bool keepCase = false;
  bool noPunct = false;
  bool recursive = false;
  std::string locale = TokenizerOptions{}.locale;
  bool dryRun = false;
  std::string memoryLimit;
  std::string kernel = TrainConfig{}.kernel == Kernel::Batched ? "batched" : "classic";
  TrainConfig config;
  SyncOptions sync;
  std::string syncCombine = "sum";
};

// --checkpoint-every: a duration ("90s", "10m", "2h") or a number of epochs ("2epochs").
struct CheckpointEvery {
  double seconds = 0;  // 0: not by time
  int epochs = 0;      // 0: not by epochs
};

CheckpointEvery parseCheckpointEvery(const std::string& text) {
  CheckpointEvery every;
  std::size_t used = 0;
  double n = 0;
  try {
    n = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string unit = used > 0 ? text.substr(used) : "";
  const bool whole = n == std::floor(n);
  if (used > 0 && n > 0 && std::isfinite(n)) {
    if (unit == "s") every.seconds = n;
    if (unit == "m") every.seconds = n * 60;
    if (unit == "h") every.seconds = n * 3600;
    if ((unit == "epoch" || unit == "epochs") && whole && n <= 100000)
      every.epochs = static_cast<int>(n);
  }
  if (every.seconds == 0 && every.epochs == 0)
    throw ConfigError(
        "--checkpoint-every: expected a duration (30s, 10m, 2h) or a whole number "
        "of epochs (2epochs), got '" +
        text + "'");
  return every;
}

// Where interrupts and --checkpoint-every write: --save-model (a file), else OUT.posvec
// beside the output (the output itself when it is a .posvec model; with "-o -",
// posvec-checkpoint.posvec in the current directory).
std::string checkpointPath(const Options& o, VectorFormat format) {
  if (!o.saveModel.empty() && o.saveModel != "-") return o.saveModel;
  // Standard output has no "beside" and cannot take a checkpoint mid-stream.
  if (o.output == "-") return "posvec-checkpoint.posvec";
  if (format == VectorFormat::Model) return o.output;
  return std::filesystem::path(o.output).replace_extension(".posvec").string();
}

// A word for a POSIX shell: as it is when it is plain, else in single quotes.
std::string shellWord(const std::string& w) {
  if (!w.empty() && w.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789_-+=./:,@%") == std::string::npos)
    return w;
  std::string q = "'";
  for (char c : w) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The command that continues from `checkpoint`: the same corpus, reading options and
// outputs; the schedule and the rest of the options are in the checkpoint.
std::string resumeCommand(const Options& o, const std::string& checkpoint) {
  std::string cmd = "posvec train";
  for (const auto& c : o.corpus) cmd += " " + shellWord(c);
  if (o.pretokenized) cmd += " --pretokenized";
  if (o.keepCase) cmd += " --keep-case";
  if (o.replaceInvalid) cmd += " --replace-invalid";
  cmd += " -o " + shellWord(o.output);
  if (!o.format.empty()) cmd += " --format " + shellWord(o.format);
  if (o.config.threads != 0) cmd += " --threads " + std::to_string(o.config.threads);
  if (!o.saveModel.empty()) cmd += " --save-model " + shellWord(o.saveModel);
  if (!o.checkpointEvery.empty()) cmd += " --checkpoint-every " + shellWord(o.checkpointEvery);
  if (o.json) cmd += " --json";
  return cmd + " --resume " + shellWord(checkpoint);
}

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
                            {"rows per synchronisation", "--sync-rows"},
                            {"words of the first warm-up interval", "--sync-warmup"}};

// Fails before hours of training, not after: the directory must exist and be writable.
void checkWritable(const std::string& path, const std::string& option) {
  namespace fs = std::filesystem;
  if (path == "-") return;
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

// `cluster`: under mpirun (runOnCluster). Rank 0 reports and writes; errors
// before training are every rank's (`together`), later ones a single rank's.
void run(const Options& o, Cluster* cluster = nullptr, bool* together = nullptr) {
  const auto start = std::chrono::steady_clock::now();
  const bool writer = !cluster || cluster->rank() == 0;
  VectorFormat format{};
  CheckpointEvery every;
  std::string checkpoint;
  std::optional<Vocabulary> vocabulary;
  CorpusSource corpus;
  auto check = [&] {
    // Decide the output format before training so a typo costs nothing.
    // Standard output has no extension: word2vec text, as word2vec.c writes by default.
    format = !o.format.empty() ? parseVectorFormat(o.format)
                                : o.output == "-" ? VectorFormat::Word2VecText
                                                  : formatFromExtension(o.output);
    if (o.output == "-" && format == VectorFormat::Npy)
      throw ConfigError(
          "output: npy cannot stream to standard output (it is two files, FILE.npy "
          "and FILE.vocab); write a file, or use --format text or bin");
    if (o.output == "-" && (o.json || o.saveModel == "-"))
      throw ConfigError(std::string("output '-' and ") + (o.json ? "--json" : "--save-model '-'") +
                        " would both write to standard output; send one of them to a file");
    if (o.resume == "-" && std::find(o.corpus.begin(), o.corpus.end(), "-") != o.corpus.end())
      throw ConfigError("the corpus and --resume cannot both be '-' (standard input)");
    if (cluster && (!o.checkpointEvery.empty() || !o.readVocab.empty() || o.dryRun))
      throw ConfigError(
          "--checkpoint-every, --read-vocab and --dry-run are for one process, not under mpirun");
    every = o.checkpointEvery.empty() ? CheckpointEvery{} : parseCheckpointEvery(o.checkpointEvery);
    checkpoint = checkpointPath(o, format);
    if (writer) {
      checkWritable(o.output, "output");
      if (!o.saveModel.empty()) checkWritable(o.saveModel, "--save-model");
      if (!o.saveVocab.empty()) checkWritable(o.saveVocab, "--save-vocab");
      if (!cluster) checkWritable(checkpoint, "checkpoint");
    }
    // A directory stands for the files in it: an output that is one of them is refused too.
    std::vector<std::string> inputs =
        CorpusSource::fromFiles(o.corpus, o.pretokenized, {}, o.recursive).paths();
    if (!o.readVocab.empty()) inputs.push_back(o.readVocab);
    // The model resumed from is read whole before anything is written, so its own
    // checkpoint (and --save-model) may replace it; the vectors output may not.
    cli::refuseOutputOverInput(o.saveModel, "--save-model", inputs);
    cli::refuseOutputOverInput(checkpoint, "checkpoint", inputs);
    cli::refuseOutputOverInput(o.saveVocab, "--save-vocab", inputs);
    // A .posvec output is its own checkpoint: the printed command resumes from it.
    if (!o.resume.empty() && checkpoint != o.output) inputs.push_back(o.resume);
    cli::refuseOutputOverInput(o.output, "output", inputs);
    if (format == VectorFormat::Npy)
      cli::refuseOutputOverInput(npyVocabularyPath(o.output), "output vocabulary", inputs);
    // Read before the corpus is counted: a bad file costs nothing.
    if (!o.readVocab.empty()) vocabulary = readWord2vecVocabulary(o.readVocab);

    TokenizerOptions tok;
    tok.lowercase = !o.keepCase;
    tok.replaceInvalid = o.replaceInvalid;
    tok.keepPunctuation = !o.noPunct;
    tok.locale = o.locale;
    corpus = CorpusSource::fromFiles(o.corpus, o.pretokenized, tok, o.recursive);
    cli::noteSkippedPaths(corpus.skippedPaths());
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
    // A resumed epoch: the speed is that of the words this run trained.
    const std::string resumed =
        r.runWords < r.words
            ? " (" + humanCount(static_cast<double>(r.runWords)) + " in this run)"
            : std::string();
    char buf[240];
    std::snprintf(buf, sizeof buf, "epoch %d done: loss %.4f, %s words%s in %.1f s (%s words/s)",
                  r.epoch, r.loss, humanCount(static_cast<double>(r.words)).c_str(),
                  resumed.c_str(), r.seconds,
                  humanCount(r.seconds > 0 ? static_cast<double>(r.runWords) / r.seconds : 0)
                      .c_str());
    progressLine->finish(buf);
  };

  // Interrupts and checkpoints: the trainer asks at each safe point. Under mpirun
  // the launcher handles signals (it ends every rank), and these stay unset.
  std::optional<cli::InterruptGuard> guard;
  if (!cluster) guard.emplace();
  cli::InterruptGuard::setImmediate(true);  // nothing to save while the corpus is counted
  auto lastCheckpoint = std::chrono::steady_clock::now();
  bool epochCheckpointDue = false;
  if (!cluster) observer.interrupt = [&] {
    cli::InterruptGuard::setImmediate(false);
    if (cli::InterruptGuard::requested()) return Interrupt::Stop;
    if (epochCheckpointDue) return Interrupt::Checkpoint;
    if (every.seconds > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - lastCheckpoint).count() >=
            every.seconds)
      return Interrupt::Checkpoint;
    return Interrupt::None;
  };
  if (!cluster) observer.checkpoint = [&](const ModelState& state) {
    saveModel(state, checkpoint);
    lastCheckpoint = std::chrono::steady_clock::now();
    epochCheckpointDue = false;
    if (!quiet) {
      std::string at = "after epoch " + std::to_string(state.epochsDone);
      if (state.partial.active()) at = "inside epoch " + std::to_string(state.epochsDone + 1);
      progressLine->finish("checkpoint " + at + " written to " + checkpoint);
    }
  };
  auto countEpochs = observer.epochEnd;
  observer.epochEnd = [countEpochs, &every, &epochCheckpointDue](const EpochReport& r) {
    countEpochs(r);
    if (every.epochs > 0 && r.epoch % every.epochs == 0) epochCheckpointDue = true;
  };
  if (!o.saveVocab.empty() && writer)
    observer.vocabulary = [&](const Vocabulary& v, std::int64_t sentences) {
      saveWord2vecVocabulary(v, sentences, o.saveVocab);
    };

  ModelState model;
  int scheduled = 0;  // the schedule's total epochs
  if (!o.resume.empty()) {
    model = loadModel(cli::seekableInput(o.resume));
    // Only the thread count (and, with a warning, the learning rate) may change when
    // resuming; the rest is the model's.
    TrainConfig stored = TrainConfig::deserialize(model.config);
    stored.threads = o.config.threads;
    if (o.alphaGiven && o.config.alpha != stored.alpha) {
      std::fprintf(stderr,
                   "posvec: warning: --alpha %g replaces the model's %g from here on: the "
                   "learning rate no longer follows the schedule of an uninterrupted run\n",
                   o.config.alpha, stored.alpha);
      stored.alpha = o.config.alpha;
    }
    model.config = stored.serialize();
    // Without --epochs a stopped or checkpointed model finishes its schedule.
    const int left = epochsLeft(model);
    const int more = o.epochsGiven || left == 0 ? o.config.epochs : left;
    scheduled = model.epochsDone + more;
    if (cluster)
      resumeDistributed(*cluster, model, corpus, more, o.sync, observer);
    else
      resumeTraining(model, corpus, more, observer);
  } else {
    TrainConfig config = o.config;
    config.loss = o.hs ? Loss::HierarchicalSoftmax : Loss::NegativeSampling;
    config.architecture = o.cbow ? Architecture::Cbow : Architecture::SkipGram;
    config.kernel = o.kernel == "batched" ? Kernel::Batched : Kernel::Classic;
    scheduled = config.epochs;
    model = cluster      ? trainDistributed(*cluster, corpus, config, o.sync, observer)
            : vocabulary ? train(corpus, config, *vocabulary, observer)
                         : train(corpus, config, observer);
  }
  cli::InterruptGuard::setImmediate(false);

  if (model.partial.active() || model.epochsDone < scheduled) {
    // Stopped by a signal: the full state, then how to go on.
    progressLine->finish("");
    saveModel(model, checkpoint);
    std::string at = "after epoch " + std::to_string(model.epochsDone);
    if (model.partial.active())
      at = "inside epoch " + std::to_string(model.epochsDone + 1) + " (" +
           std::to_string(model.partial.words) + " words into it)";
    std::fprintf(stderr,
                 "posvec: training stopped %s of %d; the full state is in %s\n"
                 "posvec: to continue: %s\n",
                 at.c_str(), scheduled, checkpoint.c_str(), resumeCommand(o, checkpoint).c_str());
    std::fflush(stderr);
    std::exit(cli::InterruptGuard::exitCode() != 0 ? cli::InterruptGuard::exitCode() : 130);
  }

  if (!writer) return;  // every rank holds the combined model; rank 0 writes it
  nlohmann::json summary;
  if (cluster) summary["ranks"] = cluster->size();
  summary["words"] = model.words.size();
  summary["dim"] = model.input.cols();
  summary["epochs_done"] = model.epochsDone;
  summary["epoch_losses"] = model.epochLosses;
  if (!o.saveModel.empty()) saveModel(model, o.saveModel);
  // Periodic checkpoints beside the output, and the checkpoint just resumed from, end
  // as the final state (a stale one would resume into epochs already trained).
  else if ((!o.checkpointEvery.empty() || o.resume == checkpoint) && checkpoint != o.output)
    saveModel(model, checkpoint);
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
                 summary["words"].get<std::size_t>(), summary["dim"].get<long>(),
                 o.output == "-" ? "standard output" : o.output.c_str(), formatName(format).c_str(),
                 seconds);
  }
  // A signal after the last safe point: training was complete and is saved.
  if (cli::InterruptGuard::requested()) {
    std::fflush(stdout);
    std::exit(cli::InterruptGuard::exitCode());
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
    << "\nno-punct=" << o.noPunct << "\nlocale=" << o.locale << "\nrecursive=" << o.recursive
    << "\nreplace-invalid=" << o.replaceInvalid << "\nsave-vocab=" << o.saveVocab
    << "\nkernel=" << o.kernel << "\nsync-words=" << o.sync.syncWords
    << "\nsync-rows=" << o.sync.syncRows << "\nsync-warmup=" << o.sync.syncWarmup
    << "\nsync-combine=" << o.syncCombine << "\n";
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
                  "Corpus files or directories: raw text, or whitespace-split lines with "
                  "--pretokenized; gzip, bzip2, xz and zstd are decompressed (\"-\" reads stdin)")
      ->required();
  sub->add_option("-o,--output", opts->output,
                  "Output file (.bin, .txt/.vec, .npy, .posvec = full-state model); '-' streams "
                  "to stdout (word2vec text unless --format says otherwise)")
      ->required();
  sub->add_option("--format", opts->format,
                  "Output format: bin, text, npy or model (default: from the extension)")
      ->check(CLI::IsMember({"bin", "text", "txt", "vec", "npy", "model"}));
  sub->add_flag("--pretokenized", opts->pretokenized,
                "Corpus is one sentence a line, tokens split on whitespace (as word2vec.c reads)");
  sub->add_flag("--recursive", opts->recursive,
                "A directory in the corpus also contributes the files of its subdirectories");
  sub->add_flag("--keep-case", opts->keepCase, "Raw text: do not lowercase");
  sub->add_flag("--replace-invalid", opts->replaceInvalid,
                "Replace invalid UTF-8 with U+FFFD instead of stopping with an error");
  sub->add_flag("--no-punct", opts->noPunct, "Raw text: drop tokens made only of punctuation");
  sub->add_option("--locale", opts->locale,
                  "Raw text: ICU locale for segmentation and case mapping (en, de, tr, zh, ja...)")
      ->capture_default_str();
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
  sub->add_option("--alpha", c.alpha,
                  "Initial learning rate (with --resume: replaces the model's, with a warning)")
      ->capture_default_str();
  sub->add_option("--min-alpha", c.minAlpha, "Final learning rate (linear decay over all epochs)")
      ->capture_default_str();
  sub->add_option("--epochs", c.epochs,
                  "Epochs (with --resume: how many more; default there: the rest of an "
                  "interrupted or checkpointed schedule, else 5)")
      ->capture_default_str();
  sub->add_option("--min-count", c.minCount, "Ignore words rarer than this")->capture_default_str();
  sub->add_option("--max-vocab", c.maxVocab, "Keep at most this many words (0: no limit)")
      ->capture_default_str()
      ->check(cli::notNegative());
  sub->add_option("-t,--threads", c.threads, "Training threads (0: all cores)")
      ->capture_default_str();
  sub->add_option("--seed", c.seed, "Random seed (one thread: same seed, same bits)")
      ->capture_default_str();
  sub->add_option("--kernel", opts->kernel,
                  "Training kernel for skip-gram with negative sampling: batched (negatives "
                  "shared by a window's contexts, several times faster) or classic (word2vec.c's "
                  "per-pair updates); CBOW and --hs always use classic")
      ->check(CLI::IsMember({"classic", "batched"}))
      ->capture_default_str();
  sub->add_option("--combine", c.combine,
                  "Batched kernel: centre words trained as one block, their contexts sharing "
                  "--block-negatives noise words (1: one window per block, 1.6 times slower "
                  "than 4 at the same quality on Brown)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  sub->add_option("--block-negatives", c.blockNegatives,
                  "Batched kernel: noise words shared by a block of --combine centre words (0: "
                  "the larger of --negative and 1.25 x --combine); each pair still weighs as "
                  "--negative negatives")
      ->capture_default_str()
      ->check(CLI::Range(0, 10000));
  auto* resume = sub->add_option("--resume", opts->resume,
                                 "Continue a full-state model (.posvec) for --epochs more epochs, "
                                 "with the schedule it would have had");
  for (const char* name : {"--dim", "--window", "--negative", "--hs", "--cbow", "--sample",
                           "--min-alpha", "--min-count", "--max-vocab", "--seed", "--kernel",
                           "--combine", "--block-negatives"})
    resume->excludes(sub->get_option(name));
  sub->add_option("--save-model", opts->saveModel,
                  "Also save the full training state (for --resume) to this file ('-': stdout)");
  sub->add_option("--checkpoint-every", opts->checkpointEvery,
                  "Save the full state every DURATION (30s, 10m, 2h) or N epochs (2epochs), "
                  "atomically, to --save-model or OUT.posvec");
  sub->add_option("--save-vocab", opts->saveVocab,
                  "Write the vocabulary in word2vec.c's format (\"word count\" lines)");
  resume->excludes(
      sub->add_option("--read-vocab", opts->readVocab,
                      "Take the vocabulary from a word2vec.c vocabulary file instead of counting"));
  sub->add_flag("--json", opts->json, "Print a JSON summary (losses, sizes, time) on stdout");
  sub->add_flag("--dry-run", opts->dryRun,
                "Count the corpus, print the memory training would need, and exit (nothing is "
                "trained or written)");
  sub->add_option("--memory-limit", opts->memoryLimit,
                  "Memory training may use, e.g. 8G (default: the physical memory; training "
                  "that would need more is refused before it starts)");
  sub->add_option("--sync-words", opts->sync.syncWords,
                  "Under mpirun: words each rank trains between two synchronisations of the "
                  "most frequent rows (all rows are combined after every epoch)")
      ->capture_default_str();
  sub->add_option("--sync-rows", opts->sync.syncRows,
                  "Under mpirun: how many of the most frequent words' rows those "
                  "synchronisations cover (0: all)")
      ->capture_default_str();
  sub->add_option("--sync-warmup", opts->sync.syncWarmup,
                  "Under mpirun: words of the first synchronisation interval of a new model's "
                  "first epoch; each next interval doubles up to --sync-words (0: no warm-up)")
      ->capture_default_str();
  sub->add_option("--sync-combine", opts->syncCombine,
                  "Under mpirun: how the ranks' rows are combined: sum (every rank's change since "
                  "the last synchronisation, as one process would apply them) or average")
      ->check(CLI::IsMember({"sum", "average"}))
      ->capture_default_str();
  sub->callback([opts, sub] {
    opts->epochsGiven = sub->get_option("--epochs")->count() > 0;
    opts->alphaGiven = sub->get_option("--alpha")->count() > 0;
    cli::withFlagNames(kFlags, [&] {
      if (Cluster::launched())
        runOnCluster(*opts);
      else
        run(*opts);
    });
  });
});

}  // namespace
