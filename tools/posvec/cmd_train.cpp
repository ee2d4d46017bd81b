// posvec train: corpus files to word vectors (and optionally the full training
// state), or more epochs for a saved model with --resume.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "cli.hpp"
#include "exit_code.hpp"
#include "interrupt.hpp"
#include "posvec/distributed.hpp"
#include "posvec/error.hpp"
#include "posvec/fasttext_export.hpp"
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
  bool updateVocab = false;
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
  std::string syncCombine;  // empty: the schedule's default (bounded sparse, sum dense)
  std::string syncSchedule = "sparse";
  std::string syncDeltas = "bf16";
  std::string weights = "fp32";  // --weights, read into config.weights
  std::string npyDtype = "float32";
  bool weightsGiven = false;
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
    if ((unit == "epoch" || unit == "epochs") && whole && n <= kMaxEpochs)
      every.epochs = static_cast<int>(n);
  }
  // A period no run reaches (1e308m is infinite seconds) would silently never fire.
  constexpr double kMaxSeconds = 366.0 * 24 * 3600;
  if (every.seconds > kMaxSeconds)
    throw ConfigError("--checkpoint-every: at most a year (8784h), got '" + text +
                      "'; for fewer checkpoints give a number of epochs (2epochs)");
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

// The command that continues from `checkpoint`: the same corpus, every option that
// shapes the tokens read from it, and the outputs; the schedule and the rest of
// the options are in the checkpoint (which also records the reading options and
// refuses a resume that reads the corpus another way).
std::string resumeCommand(const Options& o, const std::string& checkpoint) {
  std::string cmd = "posvec train";
  for (const auto& c : o.corpus) cmd += " " + shellWord(c);
  if (o.recursive) cmd += " --recursive";
  if (o.pretokenized) cmd += " --pretokenized";
  if (o.keepCase) cmd += " --keep-case";
  if (o.noPunct) cmd += " --no-punct";
  if (o.locale != TokenizerOptions{}.locale) cmd += " --locale " + shellWord(o.locale);
  if (o.replaceInvalid) cmd += " --replace-invalid";
  if (!o.saveVocab.empty()) cmd += " --save-vocab " + shellWord(o.saveVocab);
  if (!o.memoryLimit.empty()) cmd += " --memory-limit " + shellWord(o.memoryLimit);
  cmd += " -o " + shellWord(o.output);
  if (!o.format.empty()) cmd += " --format " + shellWord(o.format);
  if (o.config.threads != 0) cmd += " --threads " + std::to_string(o.config.threads);
  if (!o.saveModel.empty()) cmd += " --save-model " + shellWord(o.saveModel);
  if (!o.checkpointEvery.empty()) cmd += " --checkpoint-every " + shellWord(o.checkpointEvery);
  if (o.json) cmd += " --json";
  return cmd + " --resume " + shellWord(checkpoint);
}

// TrainConfig::validate's meanings, resumeTraining's and SyncOptions', with their flags.
// --subwords without --alpha: fastText's initial learning rate.
constexpr double kSubwordAlpha = 0.05;

const cli::FlagNames kFlags{{"dimension", "--dim"},
                            {"window", "--window"},
                            {"negative samples", "--negative"},
                            {"noise distribution exponent", "--ns-exponent"},
                            {"subsampling threshold", "--sample"},
                            {"initial learning rate", "--alpha"},
                            {"final learning rate", "--min-alpha"},
                            {"epochs", "--epochs"},
                            {"minimum count", "--min-count"},
                            {"threads", "--threads"},
                            {"words between synchronisations", "--sync-words"},
                            {"rows per synchronisation", "--sync-rows"},
                            {"words of the first warm-up interval", "--sync-warmup"},
                            {"memory limit", "--memory-limit"},
                            {"longest character n-gram", "--maxn"},
                            {"shortest character n-gram", "--minn"},
                            {"n-gram buckets", "--bucket"},
                            {"subword training", "--subwords"}};

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

// --memory-limit, else the environment variable POSVEC_MEMORY_LIMIT (0: neither,
// the physical memory).
std::uint64_t memoryLimitOf(const std::string& option) {
  if (!option.empty()) return parseMemorySize(option);
  const char* env = std::getenv("POSVEC_MEMORY_LIMIT");
  if (!env || !*env) return 0;
  try {
    return parseMemorySize(env);
  } catch (const ConfigError& e) {
    throw ConfigError(std::string("POSVEC_MEMORY_LIMIT: ") + e.what());
  }
}

// The environment variable POSVEC_BF16_UPDATE=pairs|halves: the benchmarks' way to
// run either in-place bfloat16 update on one machine (TrainConfig::bf16Update).
Bf16Update bf16UpdateOf() {
  const char* env = std::getenv("POSVEC_BF16_UPDATE");
  const std::string name = env ? env : "";
  if (name.empty()) return Bf16Update::Auto;
  if (name == "pairs") return Bf16Update::Pairs;
  if (name == "halves") return Bf16Update::Halves;
  throw ConfigError("the environment variable POSVEC_BF16_UPDATE is '" + name +
                    "': set it to pairs or halves, or unset it");
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

const char* const kFastTextNeedsSubwords =
    "--format fasttext needs subword training (--subwords): fastText's .bin holds the "
    "character n-gram rows a word-only model does not have";

// What run() settles before training: formats, paths, the corpus (and vocabulary).
struct Plan {
  VectorFormat format{};
  bool fastText = false;  // --format fasttext: fastText's .bin (format stays bin for the rest)
  CheckpointEvery every;
  std::string checkpoint;
  std::optional<Vocabulary> vocabulary;
  CorpusSource corpus;
  CorpusSource whole;  // under mpirun: the whole corpus, before this rank's share
  std::uint64_t memoryLimit = 0;
  Bf16Update bf16Update = Bf16Update::Auto;
};

// A corpus file that is not text (vectors, a model, an array) is named as what it is,
// not as invalid UTF-8 somewhere inside it.
void refuseBinaryCorpus(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    if (path == "-" || path.rfind("/proc/self/fd/", 0) == 0) continue;
    const std::string kind = binaryFileKind(path);
    if (!kind.empty())
      throw InputError("corpus '" + path + "' is " + kind +
                       ", not text; train reads text files (plain or compressed)");
  }
}

// Everything that can be wrong before training, checked before the corpus is counted
// where it can be: a typo costs nothing.
Plan prepare(const Options& o, Cluster* cluster, bool writer) {
  Plan plan;
  // Standard output has no extension: word2vec text, as word2vec.c writes by default.
  plan.fastText = o.format == "fasttext";
  if (plan.fastText && o.resume.empty() && !o.config.subwords)
    throw ConfigError(kFastTextNeedsSubwords);
  plan.format = plan.fastText       ? VectorFormat::Word2VecBinary
                : !o.format.empty() ? parseVectorFormat(o.format)
                : o.output == "-"   ? VectorFormat::Word2VecText
                                    : formatFromExtension(o.output);
  if (o.npyDtype == "float16" && plan.format != VectorFormat::Npy)
    throw ConfigError("--npy-dtype float16 is for npy output (--format npy or an .npy file)");
  if (o.output == "-" && plan.format == VectorFormat::Npy)
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
  if (o.saveVocab == "-" && (o.output == "-" || o.json || o.saveModel == "-"))
    throw ConfigError("--save-vocab '-' and " +
                      std::string(o.output == "-" ? "output '-'"
                                  : o.json        ? "--json"
                                                  : "--save-model '-'") +
                      " would both write to standard output; send one of them to a file");
  plan.every =
      o.checkpointEvery.empty() ? CheckpointEvery{} : parseCheckpointEvery(o.checkpointEvery);
  plan.checkpoint = checkpointPath(o, plan.format);
  // Two outputs that are one file: the later write would replace the earlier.
  // The checkpoint is --save-model, or a .posvec output, by design.
  std::vector<std::pair<std::string, std::string>> outputs{{o.output, "output"}};
  if (plan.format == VectorFormat::Npy)
    outputs.emplace_back(npyVocabularyPath(o.output), "output vocabulary");
  outputs.emplace_back(o.saveModel, "--save-model");
  outputs.emplace_back(o.saveVocab, "--save-vocab");
  if (plan.checkpoint != o.saveModel && plan.checkpoint != o.output)
    outputs.emplace_back(plan.checkpoint, "checkpoint");
  cli::refuseSameOutputs(outputs);
  plan.memoryLimit = memoryLimitOf(o.memoryLimit);
  plan.bf16Update = bf16UpdateOf();
  if (writer) {
    checkWritable(o.output, "output");
    if (!o.saveModel.empty()) checkWritable(o.saveModel, "--save-model");
    if (!o.saveVocab.empty()) checkWritable(o.saveVocab, "--save-vocab");
    if (!cluster) checkWritable(plan.checkpoint, "checkpoint");
  }
  // A directory stands for the files in it: an output that is one of them is refused too.
  const std::vector<std::string> corpusFiles =
      CorpusSource::fromFiles(o.corpus, o.pretokenized, {}, o.recursive).paths();
  std::vector<std::string> inputs = corpusFiles;
  if (!o.readVocab.empty()) inputs.push_back(o.readVocab);
  // The model resumed from is read whole before anything is written, so its own
  // checkpoint (and --save-model) may replace it; the vectors output may not.
  cli::refuseOutputOverInput(o.saveModel, "--save-model", inputs);
  cli::refuseOutputOverInput(plan.checkpoint, "checkpoint", inputs);
  cli::refuseOutputOverInput(o.saveVocab, "--save-vocab", inputs);
  // A .posvec output is its own checkpoint: the printed command resumes from it.
  if (!o.resume.empty() && plan.checkpoint != o.output) inputs.push_back(o.resume);
  cli::refuseOutputOverInput(o.output, "output", inputs);
  if (plan.format == VectorFormat::Npy)
    cli::refuseOutputOverInput(npyVocabularyPath(o.output), "output vocabulary", inputs);
  refuseBinaryCorpus(corpusFiles);
  // Read before the corpus is counted: a bad file costs nothing.
  if (!o.readVocab.empty()) plan.vocabulary = readWord2vecVocabulary(o.readVocab);

  TokenizerOptions tok;
  tok.lowercase = !o.keepCase;
  tok.replaceInvalid = o.replaceInvalid;
  tok.keepPunctuation = !o.noPunct;
  tok.locale = o.locale;
  plan.corpus = CorpusSource::fromFiles(o.corpus, o.pretokenized, tok, o.recursive);
  cli::noteSkippedPaths(plan.corpus.skippedPaths());
  if (!cluster) return plan;
  if (o.resume.empty()) o.config.validate();
  if (o.resume.empty() && o.config.subwords)
    throw ConfigError("--subwords: subword training runs in one process only; leave out mpirun");
  if ((o.resume.empty() || o.weightsGiven) && o.config.weights != WeightType::Fp32 &&
      o.syncSchedule == "dense")
    throw ConfigError("--weights " + o.weights +
                      ": the dense synchronisation schedule combines float32 weights only; use the "
                      "sparse schedule (the default) or --weights fp32");
  o.sync.validate();
  plan.whole = plan.corpus;
  plan.corpus = cluster->share(plan.corpus);
  return plan;
}

// Under mpirun every rank prepares, and all agree on the first error (one rank's
// missing file stops them all, reported once).
Plan prepareTogether(const Options& o, Cluster& cluster, bool writer) {
  Plan plan;
  std::string error;
  ErrorKind kind = ErrorKind::Other;
  try {
    cli::withFlagNames(kFlags, [&] { plan = prepare(o, &cluster, writer); });
  } catch (const Error& e) {
    kind = errorKind(e);
    if (kind == ErrorKind::Other) throw;
    error = cli::spelledMessage(e);
  }
  cluster.agree(error, kind);
  // Each rank cuts its range from its own copy of the files: they must be equal.
  cluster.requireSameCorpus(plan.whole);
  return plan;
}

// Whether the run writes a model's full state besides its output: --save-model, or
// the final checkpoint (periodic checkpoints, or the checkpoint just resumed from).
bool writesState(const Options& o, const Plan& plan) {
  const bool finalCheckpoint = !o.checkpointEvery.empty() || o.resume == plan.checkpoint;
  return !o.saveModel.empty() || (finalCheckpoint && plan.checkpoint != o.output);
}

// Whether a new subword model's bucket rows no word uses can stay unheld
// (TrainConfig::deferRows): every writer of the end (and of a stop) draws them as
// it writes; a periodic checkpoint is taken from the complete model.
bool rowsDeferred(const Options& o) { return o.checkpointEvery.empty(); }

// --dry-run: the memory estimate, nothing trained or written.
void printDryRun(const Options& o, const Plan& plan) {
  const CorpusSource& corpus = plan.corpus;
  TrainConfig config = o.config;
  config.memoryLimit = plan.memoryLimit;
  config.loss = o.hs ? Loss::HierarchicalSoftmax : Loss::NegativeSampling;
  if (!o.resume.empty()) throw ConfigError("--dry-run estimates a new training, not --resume");
  config.deferRows = rowsDeferred(o);  // as the training would (trainOrResume)
  const MemoryEstimate e = estimateTrainingMemory(corpus, config);
  // 16-bit weights train skip-gram with negative sampling: the batched or the subword kernel.
  const bool halfPossible = config.architecture == Architecture::SkipGram &&
                            config.loss == Loss::NegativeSampling &&
                            (config.subwords || config.kernel == Kernel::Batched);
  if (o.json) {
    nlohmann::json j;
    j["words"] = e.words;
    j["dim"] = config.dim;
    j["matrices_bytes"] = e.matrices;
    j["weights"] = weightTypeName(config.weights);
    j["matrices_bytes_fp32"] = e.matrices / weightTypeBytes(config.weights) * 4;
    if (halfPossible)
      j["matrices_bytes_16bit"] = e.matrices / weightTypeBytes(config.weights) * 2;
    else
      j["matrices_bytes_16bit"] = nullptr;
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
    const std::uint64_t values = e.matrices / weightTypeBytes(config.weights);
    if (halfPossible)
      std::printf("matrices with weights fp32: %s, bf16 or fp16: %s (--weights %s)\n",
                  bytesText(values * 4).c_str(), bytesText(values * 2).c_str(),
                  weightTypeName(config.weights));
    std::printf("available: %s (%s)\n", bytesText(e.available).c_str(),
                e.total() <= e.available ? "fits" : "does NOT fit");
  }
}

// A loss for people: "n/a" for an epoch that made no prediction (NaN).
std::string lossText(double loss) {
  if (std::isnan(loss)) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", loss);
  return buf;
}

std::string percentText(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100 * fraction);
  return buf;
}

// The warning for a vocabulary that keeps too little of the corpus to train on,
// or "" when it is fine: a small corpus at the default min-count trains a handful
// of words and reports no error.
std::string vocabularyWarning(const CorpusCounts& c, const TrainConfig& config) {
  const std::string why =
      config.maxVocab > 0 && c.keptWords >= static_cast<std::int64_t>(config.maxVocab)
          ? "--max-vocab " + std::to_string(config.maxVocab)
          : "--min-count " + std::to_string(config.minCount);
  const std::string kept = std::to_string(c.keptWords) + " of " + std::to_string(c.distinctWords) +
                           " distinct words (" + std::to_string(c.keptTokens) + " of " +
                           std::to_string(c.tokens) + " tokens)";
  const bool tiny = c.keptWords < 20 && c.keptWords < c.distinctWords;
  const bool mostDropped = c.tokens > 0 && 2 * c.keptTokens < c.tokens;
  if (!tiny && !mostDropped) return {};
  std::string w = "posvec: warning: " + why + " kept " + kept;
  if (tiny)
    w += "; a vocabulary this small learns next to nothing";
  else
    w += ": " + percentText(1 - static_cast<double>(c.keptTokens) / static_cast<double>(c.tokens)) +
         " of the corpus is not trained on";
  return w + "; for a small corpus lower --min-count (e.g. --min-count 1)";
}

// Progress lines, epoch summaries and the vocabulary warning on stderr.
TrainObserver reportingObserver(const Options& o, bool quiet,
                                const std::shared_ptr<cli::ProgressLine>& progressLine) {
  TrainObserver observer;
  if (quiet) return observer;
  observer.log = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  observer.counted = [config = o.config](const CorpusCounts& c) {
    const std::string warning = vocabularyWarning(c, config);
    if (!warning.empty()) std::fprintf(stderr, "%s\n", warning.c_str());
  };
  observer.progress = [progressLine](const TrainProgress& p) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "epoch %d/%d  %5.1f%%  %s words/s  alpha %.5f  loss %s  ETA %s",
                  p.epoch, p.epochs, 100 * p.fraction, humanCount(p.wordsPerSecond).c_str(),
                  p.alpha, lossText(p.loss).c_str(), clock(p.etaSeconds).c_str());
    progressLine->update(buf);
  };
  observer.epochEnd = [progressLine](const EpochReport& r) {
    // A resumed epoch: the speed is that of the words this run trained.
    const std::string resumed =
        r.runWords < r.words ? " (" + humanCount(static_cast<double>(r.runWords)) + " in this run)"
                             : std::string();
    char buf[240];
    std::snprintf(
        buf, sizeof buf, "epoch %d done: loss %s, %s words%s in %.1f s (%s words/s)", r.epoch,
        lossText(r.loss).c_str(), humanCount(static_cast<double>(r.words)).c_str(), resumed.c_str(),
        r.seconds,
        humanCount(r.seconds > 0 ? static_cast<double>(r.runWords) / r.seconds : 0).c_str());
    progressLine->finish(buf);
  };
  return observer;
}

// Interrupts and checkpoints: the trainer asks at each safe point. The state lives
// as long as training does.
struct Checkpointing {
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
  bool epochDue = false;
};

void addCheckpointing(TrainObserver& observer, Checkpointing& state, const Plan& plan, bool quiet,
                      const std::shared_ptr<cli::ProgressLine>& progressLine) {
  observer.interrupt = [&state, &plan] {
    cli::InterruptGuard::setImmediate(false);
    if (cli::InterruptGuard::requested()) return Interrupt::Stop;
    if (state.epochDue) return Interrupt::Checkpoint;
    if (plan.every.seconds > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - state.last).count() >=
            plan.every.seconds)
      return Interrupt::Checkpoint;
    return Interrupt::None;
  };
  observer.checkpoint = [&state, &plan, quiet, progressLine](const ModelState& model) {
    state.last = std::chrono::steady_clock::now();
    state.epochDue = false;
    try {
      saveModel(model, plan.checkpoint);
    } catch (const IoError& e) {
      // A full disk or a lost directory costs this checkpoint, not the run: the
      // previous checkpoint (if any) is still whole, and the final writes at the
      // end report the error if it lasts.
      progressLine->finish("");
      std::fprintf(stderr, "posvec: warning: checkpoint not written (%s); training goes on\n",
                   e.what());
      return;
    }
    if (!quiet) {
      std::string at = "after epoch " + std::to_string(model.epochsDone);
      if (model.partial.active()) at = "inside epoch " + std::to_string(model.epochsDone + 1);
      progressLine->finish("checkpoint " + at + " written to " + plan.checkpoint);
    }
  };
  auto report = observer.epochEnd;
  observer.epochEnd = [report, &state, &plan](const EpochReport& r) {
    // An epoch too short for a safe point inside: the state can be saved from here
    // on, before its line is shown.
    cli::InterruptGuard::setImmediate(false);
    if (report) report(r);
    if (plan.every.epochs > 0 && r.epoch % plan.every.epochs == 0) state.epochDue = true;
  };
}

// Trains a new model or continues --resume's; `scheduled` gets the schedule's total epochs.
ModelState trainOrResume(const Options& o, Plan& plan, Cluster* cluster,
                         const TrainObserver& observer, int& scheduled) {
  // Under mpirun rank 0 writes: when it writes word vectors alone, the last round
  // brings it the input rows only.
  SyncOptions sync = o.sync;
  if (!plan.fastText && plan.format != VectorFormat::Model && !writesState(o, plan))
    sync.final = SyncOptions::Final::WriterVectors;
  ModelState model;
  if (!o.resume.empty()) {
    model = loadModel(cli::seekableInput(o.resume, [](std::string_view head) {
      // Standard input may be endless: look at the magic before copying it.
      if (head.substr(0, 8) != std::string_view("POSVECM1", 8))
        throw FormatError("<stdin>: not a posvec model file (bad magic; expected 'POSVECM1')");
    }));
    // Only the thread count (and, with a warning, the learning rate) may change when
    // resuming; the rest is the model's.
    TrainConfig stored = TrainConfig::deserialize(model.config);
    if (plan.fastText && !stored.subwords) throw ConfigError(kFastTextNeedsSubwords);
    stored.threads = o.config.threads;
    // The weights' storage may change: the model is float32 in its file either way.
    if (o.weightsGiven) stored.weights = o.config.weights;
    if (o.alphaGiven && o.config.alpha != stored.alpha) {
      std::fprintf(stderr,
                   "posvec: warning: --alpha %g replaces the model's %g from here on: the "
                   "learning rate no longer follows the schedule of an uninterrupted run\n",
                   o.config.alpha, stored.alpha);
      stored.alpha = o.config.alpha;
    }
    // The trainer's record of how the corpus was read ("corpus." lines) stays.
    std::string reading;
    std::istringstream lines(model.config);
    for (std::string line; std::getline(lines, line);)
      if (line.rfind("corpus.", 0) == 0) reading += line + "\n";
    model.config = stored.serialize() + reading;
    if (o.updateVocab) {
      if (cluster)
        throw ConfigError("--update-vocab runs in one process (count the new text first)");
      const std::size_t before = model.words.size();
      const std::size_t added = extendVocabulary(model, plan.corpus);
      if (observer.log)
        observer.log("vocabulary: " + std::to_string(added) + " new words added to the model's " +
                     std::to_string(before));
    }
    // Without --epochs a stopped or checkpointed model finishes its schedule.
    const int left = epochsLeft(model);
    const int more = o.epochsGiven || left == 0 ? o.config.epochs : left;
    scheduled = model.epochsDone + more;
    if (cluster)
      resumeDistributed(*cluster, model, plan.corpus, more, sync, observer);
    else
      resumeTraining(model, plan.corpus, more, observer);
    return model;
  }
  TrainConfig config = o.config;
  config.memoryLimit = plan.memoryLimit;
  config.bf16Update = plan.bf16Update;
  config.loss = o.hs ? Loss::HierarchicalSoftmax : Loss::NegativeSampling;
  config.architecture = o.cbow ? Architecture::Cbow : Architecture::SkipGram;
  config.kernel = o.kernel == "batched" ? Kernel::Batched : Kernel::Classic;
  // fastText's learning rate for subword models (0.05): at word2vec's 0.025 one
  // epoch of Brown reaches a tenth of fastText's analogy accuracy.
  if (config.subwords && !o.alphaGiven) config.alpha = kSubwordAlpha;
  // A new subword model's bucket rows no word uses are drawn as its writers write
  // them, never held (rowsDeferred).
  config.deferRows = rowsDeferred(o) && !cluster;
  scheduled = config.epochs;
  return cluster           ? trainDistributed(*cluster, plan.corpus, config, sync, observer)
         : plan.vocabulary ? train(plan.corpus, config, *plan.vocabulary, observer)
                           : train(plan.corpus, config, observer);
}

// Stopped by a signal: the full state, then how to go on.
[[noreturn]] void saveStopped(const Options& o, const ModelState& model, const Plan& plan,
                              int scheduled, cli::ProgressLine& progressLine) {
  progressLine.finish("");
  saveModel(model, plan.checkpoint);
  std::string at = "after epoch " + std::to_string(model.epochsDone);
  if (model.partial.active())
    at = "inside epoch " + std::to_string(model.epochsDone + 1) + " (" +
         std::to_string(model.partial.words) + " words into it)";
  std::fprintf(stderr,
               "posvec: training stopped %s of %d; the full state is in %s\n"
               "posvec: to continue: %s\n",
               at.c_str(), scheduled, plan.checkpoint.c_str(),
               resumeCommand(o, plan.checkpoint).c_str());
  std::fflush(stderr);
  std::exit(cli::InterruptGuard::exitCode() != 0 ? cli::InterruptGuard::exitCode() : 130);
}

// Writes the vectors (and the full state where asked) and reports what was written.
void writeResults(const Options& o, ModelState& model, const Plan& plan, Cluster* cluster,
                  bool quiet, std::chrono::steady_clock::time_point start) {
  nlohmann::json summary;
  if (cluster) summary["ranks"] = cluster->size();
  summary["words"] = model.words.size();
  summary["dim"] = model.input.cols();
  summary["epochs_done"] = model.epochsDone;
  // NaN (an epoch without predictions) is JSON's null.
  summary["epoch_losses"] = model.epochLosses;
  if (!o.saveModel.empty()) saveModel(model, o.saveModel);
  // Periodic checkpoints beside the output, and the checkpoint just resumed from, end
  // as the final state (a stale one would resume into epochs already trained).
  else if (writesState(o, plan))
    saveModel(model, plan.checkpoint);
  const auto writeVectors = [&](const Embeddings& vectors) {
    if (plan.format == VectorFormat::Npy && o.npyDtype == "float16")
      saveNpyFloat16(vectors, o.output);
    else
      saveVectors(vectors, o.output, plan.format);
  };
  if (plan.fastText) {
    saveFastTextModel(model, o.output);  // 16-bit weights: widened as they are written
  } else if (plan.format == VectorFormat::Model) {
    saveModel(model, o.output);
  } else if (static_cast<std::size_t>(model.input.rows()) != model.words.size()) {
    // Subwords: the composed vectors of the vocabulary (fastText's .vec).
    model.output = MatrixF();
    writeVectors(embeddingsOf(model));
  } else {
    // Hand the matrix over instead of copying it: peak memory stays at the two matrices.
    model.output = MatrixF();
    unpackWeights(model);  // 16-bit weights: the input rows widened in place
    writeVectors(
        Embeddings(std::move(model.words), std::move(model.input), std::move(model.counts)));
  }

  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (o.json) {
    nlohmann::json j = summary;
    j["output"] = o.output;
    j["format"] = plan.fastText ? "fasttext" : formatName(plan.format);
    j["seconds"] = seconds;
    if (!o.saveModel.empty()) j["model"] = o.saveModel;
    std::cout << cli::jsonText(j) << "\n";
  } else if (!quiet) {
    std::fprintf(stderr, "wrote %zu x %ld vectors to %s (%s); %.1f s in all\n",
                 summary["words"].get<std::size_t>(), summary["dim"].get<long>(),
                 o.output == "-" ? "standard output" : o.output.c_str(),
                 plan.fastText ? "fasttext" : formatName(plan.format).c_str(), seconds);
  }
}

// `cluster`: under mpirun (runOnCluster). Rank 0 reports and writes; errors
// before training are every rank's (`together`), later ones a single rank's.
void run(const Options& o, Cluster* cluster = nullptr, bool* together = nullptr) {
  const auto start = std::chrono::steady_clock::now();
  const bool writer = !cluster || cluster->rank() == 0;
  Plan plan;
  if (!cluster) {
    plan = prepare(o, nullptr, writer);
  } else {
    plan = prepareTogether(o, *cluster, writer);
    *together = false;
  }

  if (o.dryRun) return printDryRun(o, plan);

  const bool quiet = cli::globals().quiet || !writer;
  auto progressLine = std::make_shared<cli::ProgressLine>();
  TrainObserver observer = reportingObserver(o, quiet, progressLine);
  // Under mpirun the launcher handles signals (it ends every rank): no checkpointing.
  std::optional<cli::InterruptGuard> guard;
  Checkpointing checkpointing;
  if (!cluster) {
    guard.emplace();
    addCheckpointing(observer, checkpointing, plan, quiet, progressLine);
  }
  cli::InterruptGuard::setImmediate(true);  // nothing to save while the corpus is counted
  if (!o.saveVocab.empty() && writer)
    observer.vocabulary = [&o](const Vocabulary& v, std::int64_t sentences) {
      saveWord2vecVocabulary(v, sentences, o.saveVocab);
    };

  int scheduled = 0;  // the schedule's total epochs
  ModelState model = trainOrResume(o, plan, cluster, observer, scheduled);
  cli::InterruptGuard::setImmediate(false);
  if (model.partial.active() || model.epochsDone < scheduled)
    saveStopped(o, model, plan, scheduled, *progressLine);

  if (!writer) return;  // every rank holds the combined model; rank 0 writes it
  writeResults(o, model, plan, cluster, quiet, start);
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
  s << "command=train\n";  // another command in the job joins with its own name
  for (const auto& c : o.corpus) s << "corpus=" << c << "\n";
  s << "output=" << o.output << "\nformat=" << o.format << "\nresume=" << o.resume
    << "\nsave-model=" << o.saveModel << "\npretokenized=" << o.pretokenized << "\nhs=" << o.hs
    << "\ncbow=" << o.cbow << "\njson=" << o.json << "\nkeep-case=" << o.keepCase
    << "\nno-punct=" << o.noPunct << "\nlocale=" << o.locale << "\nrecursive=" << o.recursive
    << "\nreplace-invalid=" << o.replaceInvalid << "\nsave-vocab=" << o.saveVocab
    << "\nkernel=" << o.kernel << "\nsync-words=" << o.sync.syncWords
    << "\nsync-rows=" << o.sync.syncRows << "\nsync-warmup=" << o.sync.syncWarmup
    << "\nsync-combine=" << o.syncCombine << "\nsync-schedule=" << o.syncSchedule
    << "\nsync-deltas=" << o.syncDeltas << "\n";
  std::istringstream config(o.config.serialize());
  for (std::string line; std::getline(config, line);)
    if (line.rfind("threads=", 0) != 0) s << line << "\n";
  return s.str();
}

// Under mpirun. Errors every rank met together (different options, a missing
// file, an unwritable output) are reported once, by rank 0, and every rank ends
// normally; an error of one rank during training is printed by that rank with
// its number and ends the whole job (the others may wait in a collective).
void runOnCluster(Options o) {
  o.sync.schedule =
      o.syncSchedule == "dense" ? SyncOptions::Schedule::Dense : SyncOptions::Schedule::Sparse;
  const std::string combine = !o.syncCombine.empty()      ? o.syncCombine
                              : o.syncSchedule == "dense" ? "sum"
                                                          : "bounded";
  o.sync.combine = combine == "average" ? SyncOptions::Combine::Average
                   : combine == "sum"   ? SyncOptions::Combine::SumChanges
                                        : SyncOptions::Combine::BoundedSum;
  o.sync.halfDeltas = o.syncDeltas == "bf16";
  std::optional<Cluster> cluster;
  cluster.emplace();
  bool together = true;
  try {
    cluster->requireSameOptions(optionLines(o));
    run(o, &*cluster, &together);
  } catch (const std::exception& e) {
    if (!together) {
      std::fprintf(stderr, "posvec: error: %s\n", cluster->tag(cli::spelledMessage(e)).c_str());
      std::fflush(stderr);
      cluster->abort(static_cast<int>(cli::exitCodeOf(e)));
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
                  "Output format: bin, text, npy, model or fasttext (fastText's .bin, with "
                  "--subwords) (default: from the extension)")
      ->check(CLI::IsMember({"bin", "text", "txt", "vec", "npy", "model", "fasttext"}));
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
  sub->add_option("--ns-exponent", c.nsExponent,
                  "Noise words are drawn with probability count^E (word2vec and gensim: 0.75; "
                  "fastText: 0.5)")
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
  sub->add_flag("--subwords", c.subwords,
                    "fastText subword vectors: a word's vector is the mean of its own row and the "
                    "rows of its character n-grams (skip-gram or CBOW, negative sampling; --alpha "
                    "defaults to fastText's 0.05 then)");
  // Each needs --subwords (checked in the callback, after --resume's exclusions: a
  // resumed model keeps its n-gram settings, and CLI11 would name --subwords first).
  sub->add_option("--minn", c.minn, "With --subwords: shortest character n-gram")
      ->capture_default_str();
  sub->add_option("--maxn", c.maxn, "With --subwords: longest character n-gram (0: no n-grams)")
      ->capture_default_str();
  // Checked as a 64-bit number first: past 2^32 - 1 CLI11's conversion said only
  // "expects a number".
  sub->add_option("--bucket", c.bucket,
                  "With --subwords: hash buckets (input rows) shared by the n-grams")
      ->capture_default_str()
      ->check(cli::notNegative())
      ->check(cli::atMost(UINT32_MAX));
  auto* resume = sub->add_option("--resume", opts->resume,
                                 "Continue a full-state model (.posvec) for --epochs more epochs, "
                                 "with the schedule it would have had");
  for (const char* name :
       {"--dim", "--window", "--negative", "--hs", "--cbow", "--sample", "--min-alpha",
        "--min-count", "--max-vocab", "--seed", "--kernel", "--combine", "--block-negatives",
        "--subwords", "--minn", "--maxn", "--bucket"})
    resume->excludes(sub->get_option(name));
  sub->add_flag("--update-vocab", opts->updateVocab,
                "With --resume: add the corpus words the model does not know (at least its "
                "min-count times) before training, as gensim's build_vocab(update=True)")
      ->needs(resume);
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
                  "Under mpirun: words each rank trains between two synchronisation rounds")
      ->capture_default_str();
  sub->add_option("--sync-rows", opts->sync.syncRows,
                  "Under mpirun: how many of the most frequent words' rows every round covers; "
                  "the row of frequency rank r beyond them travels about every r / this "
                  "rounds (sparse schedule) or at epoch ends (dense) (0: all rows every round)")
      ->capture_default_str();
  sub->add_option("--sync-warmup", opts->sync.syncWarmup,
                  "Under mpirun: words of the first synchronisation interval of a new model's "
                  "first epoch; each next interval doubles up to --sync-words (0: no warm-up)")
      ->capture_default_str();
  sub->add_option(
         "--sync-combine", opts->syncCombine,
         "Under mpirun: how the ranks' rows are combined: bounded (the sum of the changes "
         "for a row few ranks trained a few times, down to 1.5 times their mean change for "
         "a row every rank trained often; stable at any number of ranks; default of the "
         "sparse schedule), sum (every "
         "rank's change since the last synchronisation; default of the dense schedule) "
         "or average (the mean row)")
      ->check(CLI::IsMember({"bounded", "sum", "average"}));
  sub->add_option("--sync-schedule", opts->syncSchedule,
                  "Under mpirun: sparse (each row about as often as it is trained, only changed "
                  "rows, overlapped with training) or dense (the --sync-rows most frequent rows "
                  "every round and all rows every epoch, blocking, in 32-bit floats)")
      ->check(CLI::IsMember({"sparse", "dense"}))
      ->capture_default_str();
  sub->add_option("--sync-deltas", opts->syncDeltas,
                  "Under mpirun, sparse schedule: how the changes travel, bf16 (16 bits) or fp32")
      ->check(CLI::IsMember({"bf16", "fp32"}))
      ->capture_default_str();
  sub->add_option("--weights", opts->weights,
                  "Storage of the weight matrices while training: fp32, bf16 or fp16 (16 bits: "
                  "half the memory, stochastic rounding; skip-gram with negative sampling and the "
                  "batched kernel). On --resume: the model's unless given")
      ->capture_default_str();
  sub->add_option("--npy-dtype", opts->npyDtype,
                  "With --format npy: the array's type, float32 or float16 (half the size)")
      ->check(CLI::IsMember({"float32", "float16"}))
      ->capture_default_str();
  sub->callback([opts, sub] {
    if (!opts->config.subwords)
      for (const char* name : {"--minn", "--maxn", "--bucket"})
        if (sub->get_option(name)->count() > 0)
          throw CLI::RequiresError(name, "--subwords");
    opts->epochsGiven = sub->get_option("--epochs")->count() > 0;
    opts->alphaGiven = sub->get_option("--alpha")->count() > 0;
    opts->weightsGiven = sub->get_option("--weights")->count() > 0;
    cli::withFlagNames(kFlags, [&] {
      if (opts->weights == "fp32")
        opts->config.weights = WeightType::Fp32;
      else if (opts->weights == "bf16")
        opts->config.weights = WeightType::Bf16;
      else if (opts->weights == "fp16")
        opts->config.weights = WeightType::Fp16;
      else
        throw ConfigError("--weights: expected fp32, bf16 or fp16 (got '" + opts->weights + "')");
      if (Cluster::launched())
        runOnCluster(*opts);
      else
        run(*opts);
    });
  });
});

}  // namespace
