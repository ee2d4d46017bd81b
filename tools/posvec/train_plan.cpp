// posvec train, before training: the options checked and turned into a Plan
// (formats, paths, the corpus and vocabulary), and the command that resumes a run.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "posvec/phrases.hpp"
#include "train_options.hpp"

namespace posvec::cli::training {

const char* const kFastTextNeedsSubwords =
    "--format fasttext needs subword training (--subwords): fastText's .bin holds the "
    "character n-gram rows a word-only model does not have";

namespace {

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

}  // namespace

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

// The command that continues from `checkpoint`: the same corpus, every option that
// shapes the tokens read from it, and the outputs; the schedule and the rest of
// the options are in the checkpoint (which also records the reading options and
// refuses a resume that reads the corpus another way).
std::string resumeCommand(const Options& o, const std::string& checkpoint) {
  std::string cmd = "posvec train";
  for (const auto& c : o.corpus) cmd += " " + shellWord(c);
  if (o.recursive) cmd += " --recursive";
  // The reading options from their rows: a switch when it is on, else the flag and value.
  forEachSetting(kTokenizerSettings, [&](const auto& row) {
    if (row.spelled.flag.empty() || row.setting.name == "chunkBytes" ||
        row.setting.name == "tokenizerThreads" ||
        o.tokenizer.*(row.member) == TokenizerOptions{}.*(row.member))
      return;
    cmd += " " + std::string(row.spelled.flag);
    if (!row.flagSwitch && !std::is_same_v<decltype(row.flagValue), bool>)
      cmd += " " + shellWord(settingText(row, o.tokenizer));
  });
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

// Everything that can be wrong before training, checked before the corpus is counted
// where it can be: a typo costs nothing.
Plan prepare(const Options& o, Cluster* cluster, bool writer) {
  Plan plan;
  // Standard output has no extension: word2vec text, as word2vec.c writes by default.
  // A subword training written to FILE.bin keeps its n-gram rows: fastText's .bin (a
  // word2vec .bin would drop them, and with them the vectors of unseen words).
  const bool binFile = o.output.size() > 4 && o.output.compare(o.output.size() - 4, 4, ".bin") == 0;
  plan.fastText = o.format == "fasttext" || (o.format.empty() && o.config.subwords && binFile);
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
  if (o.alsoVec) {
    if (!plan.fastText)
      throw ConfigError(
          "--also-vec writes FILE.vec beside fastText's .bin: it needs a subword "
          "training written as FILE.bin or with --format fasttext");
    if (o.output == "-")
      throw ConfigError("--also-vec writes FILE.vec beside the output: give -o FILE.bin");
    plan.vecOutput = (binFile ? o.output.substr(0, o.output.size() - 4) : o.output) + ".vec";
    outputs.emplace_back(plan.vecOutput, "--also-vec output");
  }
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
      CorpusSource::fromFiles(o.corpus, o.tokenizer.mode == TokenizerOptions::Mode::Whitespace, {},
                              o.recursive)
          .paths();
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
  tok.lowercase = o.tokenizer.lowercase;
  tok.replaceInvalid = o.tokenizer.replaceInvalid;
  tok.keepPunctuation = o.tokenizer.keepPunctuation;
  tok.locale = o.tokenizer.locale;
  plan.corpus = CorpusSource::fromFiles(
      o.corpus, o.tokenizer.mode == TokenizerOptions::Mode::Whitespace, tok, o.recursive);
  cli::noteSkippedPaths(plan.corpus.skippedPaths());
  if (!o.phrases.empty()) {
    if (cluster)
      throw ConfigError(
          "--phrases joins phrases in one process; under mpirun give the corpus "
          "posvec phrases wrote");
    // The table is read now (a bad one costs nothing); each sentence is rewritten as the
    // counting pass reads it, and training reads the counted stream.
    auto model = std::make_shared<const Phrases>(readPhraseTable(o.phrases));
    const CorpusSource files = plan.corpus;
    plan.corpus = CorpusSource::fromGenerator([model, files](const SentenceSink& sink) {
      model->applyCorpus(files, [&](const std::vector<std::string>& s) { sink(Sentence(s)); });
    });
  }
  if (!cluster) return plan;
  if (o.resume.empty()) o.config.validate();
  if (o.resume.empty() && o.config.subwords)
    throw ConfigError("--subwords: subword training runs in one process only; leave out mpirun");
  if ((o.resume.empty() || o.weightsGiven) && o.config.weights != WeightType::Fp32 &&
      o.sync.schedule == SyncOptions::Schedule::Dense)
    throw ConfigError(std::string("--weights ") + weightTypeName(o.config.weights) +
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
    plan = prepare(o, &cluster, writer);
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

}  // namespace posvec::cli::training
