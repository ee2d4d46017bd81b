// posvec train, what it says and writes: progress lines, the memory estimate of
// --dry-run, the vectors and full state at the end, and the JSON summary.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "posvec/fasttext_export.hpp"
#include "train_options.hpp"

namespace posvec::cli::training {
namespace {

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

}  // namespace

// --dry-run: the memory estimate, nothing trained or written.
namespace {

// About how many bytes the output file(s) will take: the matrices as each format stores
// them, the words, and the text format's printed values (about 12 characters each).
std::uint64_t outputBytes(const Plan& plan, const MemoryEstimate& e, const TrainConfig& config) {
  const std::uint64_t v = e.words, d = config.dim, words = e.wordBytes;
  if (plan.fastText) {
    // fastText's .bin: header, dictionary (word, count, type), the input matrix with the
    // n-gram rows, the output matrix.
    const std::uint64_t rows = v + static_cast<std::uint64_t>(config.bucket);
    return 100 + words + 10 * v + 16 + rows * d * 4 + 1 + 16 + v * d * 4;
  }
  switch (plan.format) {
    case VectorFormat::Word2VecText:
      return 24 + words + v * (1 + d * 12);
    case VectorFormat::Npy:
      return 128 + v * d * 4 + words + v * 4;  // FILE.npy and FILE.vocab ("word count")
    case VectorFormat::Model:
      return 512 + e.matrices + words + 9 * v;  // configuration text, words, counts
    default:
      return 24 + words + v * (2 + d * 4);
  }
}

}  // namespace

void printDryRun(const Options& o, const Plan& plan) {
  const CorpusSource& corpus = plan.corpus;
  TrainConfig config = o.config;
  config.memoryLimit = plan.memoryLimit;
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
    j["output_bytes"] = outputBytes(plan, e, config);
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
    const std::uint64_t out = outputBytes(plan, e, config);
    std::printf("output: about %s (%s)\n",
                out < (1u << 20) ? (std::to_string((out + 512) / 1024) + " KiB").c_str()
                                 : bytesText(out).c_str(),
                plan.fastText ? "fasttext" : formatName(plan.format).c_str());
  }
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
    // fastText's .vec: the vocabulary's composed vectors as word2vec text.
    if (!plan.vecOutput.empty())
      saveVectors(embeddingsOf(model), plan.vecOutput, VectorFormat::Word2VecText);
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
    // A word2vec .bin of a subword training: the name fastText gives its full model.
    if (o.config.subwords && !plan.fastText && plan.format == VectorFormat::Word2VecBinary)
      std::fprintf(stderr,
                   "note: word vectors only; the n-gram rows that build unseen words are not in "
                   "this format (--format fasttext keeps them)\n");
    std::fprintf(stderr, "wrote %zu x %ld vectors to %s (%s); %.1f s in all\n",
                 summary["words"].get<std::size_t>(), summary["dim"].get<long>(),
                 o.output == "-" ? "standard output" : o.output.c_str(),
                 plan.fastText ? "fasttext" : formatName(plan.format).c_str(), seconds);
  }
}

}  // namespace posvec::cli::training
