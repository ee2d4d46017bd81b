#include "posvec/memory_estimate.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "dense_rows.hpp"
#include "kernel_subword.hpp"
#include "memory_estimate.hpp"
#include "parallel.hpp"
#include "posvec/error.hpp"

namespace posvec {

std::uint64_t parseMemorySize(const std::string& text) {
  const char* begin = text.c_str();
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(begin, &end);
  double scale = 1;
  switch (*end) {
    case 'k':
    case 'K':
      scale = 1024.0;
      ++end;
      break;
    case 'm':
    case 'M':
      scale = 1024.0 * 1024;
      ++end;
      break;
    case 'g':
    case 'G':
      scale = 1024.0 * 1024 * 1024;
      ++end;
      break;
    case 't':
    case 'T':
      scale = 1024.0 * 1024 * 1024 * 1024;
      ++end;
      break;
    default:
      break;
  }
  if (*end == 'i' || *end == 'B') ++end;  // "MiB", "MB", "Mi" all mean the same here
  if (*end == 'B') ++end;
  if (errno != 0 || end == begin || *end != '\0' || !(value > 0) || value * scale > 1.8e19)
    throw ConfigError(ErrorText::about(Setting{"memoryLimit", "memory limit"})
                      << " must be a positive size such as 4G, 512M or 1000000 (got '" << text
                      << "')");
  return static_cast<std::uint64_t>(value * scale);
}

std::uint64_t availableMemory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0
             ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page)
             : UINT64_MAX;
}

MemoryEstimate estimateTrainingMemory(const CorpusSource& corpus, const TrainConfig& config) {
  config.validate();
  const int threads = detail::resolveThreads(config.threads);
  const detail::PreparedCorpus prepared =
      detail::prepareCorpus(corpus, config.minCount, config.maxVocab, 20'000'000, threads);
  return detail::estimateMemory(prepared, config, threads);
}

namespace detail {

std::string humanBytes(std::uint64_t bytes) {
  char buf[64];
  const double b = static_cast<double>(bytes);
  if (b >= 1024.0 * 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%.2f GiB", b / (1024.0 * 1024 * 1024));
  else if (b >= 1024.0 * 1024)
    std::snprintf(buf, sizeof buf, "%.1f MiB", b / (1024.0 * 1024));
  else if (b >= 1024.0)
    std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024.0);
  else
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  return buf;
}

MemoryEstimate estimateMemory(const PreparedCorpus& corpus, const TrainConfig& config,
                              int threads) {
  MemoryEstimate e;
  const Vocabulary& vocab = corpus.vocabulary;
  e.words = vocab.size();
  for (std::size_t i = 0; i < vocab.size(); ++i)
    e.wordBytes += vocab.word(static_cast<WordId>(i)).size();
  const std::uint64_t v = vocab.size(), d = config.dim;
  const std::uint64_t outRows = config.loss == Loss::HierarchicalSoftmax && v > 0 ? v - 1 : v;
  // Subword training: the input matrix has a row per n-gram bucket too, unless the
  // model is written as it ends (TrainConfig::deferRows): then only the rows its words
  // use are held (gathered, where that pays), and a position for every row.
  std::uint64_t inRows = v + (config.subwords ? config.bucket : 0);
  std::uint64_t positions = 0;
  if (config.subwords && config.deferRows && v > 0) {
    const std::size_t rowBytes = d * weightTypeBytes(config.weights);
    const std::size_t used =
        DenseRows::distinctRows(subwordRowsOf(vocab.words(), config, threads), inRows);
    if (DenseRows::pays(used, inRows, rowBytes)) {
      positions = inRows * 4 + used * 4;
      inRows = used;
    }
  }
  e.matrices = (inRows + outRows) * d * weightTypeBytes(config.weights);
  // Words longer than the string's inline buffer (15 bytes) live on the heap, in
  // the vocabulary, its index and the model's copy: malloc rounds to 16 plus 8.
  std::uint64_t heap = 0;
  for (const auto& w : vocab.words())
    if (w.size() > 15) heap += 3 * (((w.size() + 1 + 15) / 16) * 16 + 8);
  e.vocabulary = v * kBytesPerWord + heap;
  // Subword training: each word's row list (its row and about one n-gram a
  // character per length), 4 bytes a row plus an 8-byte offset.
  if (config.subwords)
    for (const auto& w : vocab.words())
      e.vocabulary += 8 + 4 * (1 + static_cast<std::uint64_t>(
                                       std::max(0, config.maxn - config.minn + 1)) *
                                       (w.size() + 2));
  // Hierarchical softmax: the Huffman tree's points and codes, about 2 log2 V each.
  if (config.loss == Loss::HierarchicalSoftmax) e.vocabulary += v * (8 + 2 * 40 * 5 / 8);
  // Per thread: the shard reader's chunk, a sentence and its subsampled copy, and
  // the kernel's scratch; an in-memory corpus keeps its ids.
  const std::uint64_t perThread = IdStream::kChunk * 4 + 2 * kMaxSentence * 4 + 64 * 1024 +
                                  2 * static_cast<std::uint64_t>(config.window + 2) * d * 4;
  e.buffers = static_cast<std::uint64_t>(threads) * perThread + IdStream::kChunk * 4;
  // 16-bit weights: each thread widens a block's rows to float32 (about the rows of
  // combine + 2 x window contexts and combine + block negatives targets).
  if (config.weights != WeightType::Fp32)
    e.buffers += static_cast<std::uint64_t>(threads) *
                 static_cast<std::uint64_t>(2 * config.combine + 2 * config.window +
                                            config.blockNegativesFor()) *
                 d * 4;
  if (corpus.stream.inMemory()) e.buffers += static_cast<std::uint64_t>(corpus.stream.size()) * 4;
  e.buffers += positions;
  e.available = config.memoryLimit > 0 ? config.memoryLimit : availableMemory();
  return e;
}

void checkMemory(const MemoryEstimate& e, const TrainConfig& config) {
  if (e.total() <= e.available) return;
  std::ostringstream s;
  s << "training needs about " << humanBytes(e.total()) << " (matrices " << humanBytes(e.matrices)
    << " for " << e.words << " words"
    << (config.subwords ? " and " + std::to_string(config.bucket) + " n-gram buckets" : "")
    << " x dim " << config.dim << ", vocabulary "
    << humanBytes(e.vocabulary) << ", buffers " << humanBytes(e.buffers) << ") but only "
    << humanBytes(e.available);
  ErrorText message(s.str());
  if (config.memoryLimit > 0)
    message << " are allowed (" << Setting{"memoryLimit", "the memory limit"} << ")";
  else
    message << " of physical memory exist";
  message << "; shrink the vocabulary with " << Setting{"minCount", "the minimum count"}
          << " (now " + std::to_string(config.minCount) + ") or "
          << Setting{"maxVocab", "the vocabulary limit"}
          << " (now " + std::to_string(config.maxVocab) + ", 0: no limit), or lower "
          << Setting{"dim", "the dimension"};
  if (config.subwords)
    message << " or " << Setting{"bucket", "the number of n-gram buckets"}
            << " (now " + std::to_string(config.bucket) + ")";
  throw ConfigError(message);
}

}  // namespace detail
}  // namespace posvec
