#include "posvec/train_config.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

#include "posvec/error.hpp"
#include "posvec/model_state.hpp"

namespace posvec {

namespace {

// %.17g: reads back as the same double (stored configurations round-trip).
std::string exactNumber(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

template <typename T>
T parseInt(const std::string& key, const std::string& value) {
  T out{};
  const char* end = value.data() + value.size();
  auto [p, ec] = std::from_chars(value.data(), end, out);
  if (ec != std::errc() || p != end)
    throw FormatError("training config: '" + key + "' has the invalid value '" + value + "'");
  return out;
}

double parseDouble(const std::string& key, const std::string& value) {
  double out = 0;
  const char* end = value.data() + value.size();
  auto [p, ec] = std::from_chars(value.data(), end, out);
  if (ec != std::errc() || p != end || !std::isfinite(out))
    throw FormatError("training config: '" + key + "' has the invalid value '" + value + "'");
  return out;
}

}  // namespace

const char* weightTypeName(WeightType type) {
  switch (type) {
    case WeightType::Bf16: return "bf16";
    case WeightType::Fp16: return "fp16";
    case WeightType::Fp32: break;
  }
  return "fp32";
}

std::size_t weightTypeBytes(WeightType type) { return type == WeightType::Fp32 ? 4 : 2; }

void TrainConfig::validate() const {
  auto fail = [](const std::string& msg) { throw ConfigError(msg); };
  if (dim < 1 || dim > kMaxDim)
    fail("dimension must be between 1 and " + std::to_string(kMaxDim) + " (got " +
         std::to_string(dim) + ")");
  if (window < 1 || window > 1000)
    fail("window must be between 1 and 1000 (got " + std::to_string(window) + ")");
  if (loss == Loss::NegativeSampling && (negative < 1 || negative > 1000))
    fail("negative samples must be between 1 and 1000 (got " + std::to_string(negative) + ")");
  if (!std::isfinite(nsExponent) || nsExponent < -10 || nsExponent > 10)
    fail("noise distribution exponent must be between -10 and 10 (word2vec's is 0.75; got " +
         exactNumber(nsExponent) + ")");
  if (!(sample >= 0) || !std::isfinite(sample) || sample >= 1)
    fail("subsampling threshold must be in [0, 1) (0 disables subsampling; got " +
         exactNumber(sample) + ")");
  if (!(alpha > 0) || !std::isfinite(alpha) || alpha > 10)
    fail("initial learning rate must be in (0, 10] (got " + exactNumber(alpha) + ")");
  if (!(minAlpha >= 0) || minAlpha > alpha)
    fail("final learning rate must be between 0 and the initial learning rate (" +
         exactNumber(alpha) + "; got " + exactNumber(minAlpha) + ")");
  if (epochs < 1 || epochs > kMaxEpochs)
    fail("epochs must be between 1 and " + std::to_string(kMaxEpochs) + " (got " +
         std::to_string(epochs) + ")");
  if (minCount < 1) fail("minimum count must be at least 1 (got " + std::to_string(minCount) + ")");
  if (combine < 1 || combine > 1024)
    fail("centre words per block (combine) must be between 1 and 1024 (got " +
         std::to_string(combine) + ")");
  if (blockNegatives < 0 || blockNegatives > 10000)
    fail("noise words per block must be between 0 (automatic) and 10000 (got " +
         std::to_string(blockNegatives) + ")");
  if (subwords) {
    if (maxn < 0 || maxn > kMaxNgramLength)
      fail("longest character n-gram must be between 0 and " + std::to_string(kMaxNgramLength) +
           " (got " + std::to_string(maxn) + ")");
    if (maxn > 0 && (minn < 1 || minn > maxn))
      fail("shortest character n-gram must be between 1 and the longest (" +
           std::to_string(maxn) + "; got " + std::to_string(minn) + ")");
    if (bucket < 1) fail("n-gram buckets must be at least 1 (got 0)");
    if (loss == Loss::HierarchicalSoftmax)
      fail("subword training uses negative sampling; hierarchical softmax with subwords is "
           "not available");
  }
  // (Before the corpus is read; training under mpirun refuses them too, once it knows.)
  if (weights != WeightType::Fp32 &&
      (architecture != Architecture::SkipGram || loss != Loss::NegativeSampling ||
       (!subwords && kernel == Kernel::Classic)))
    fail(std::string("weights stored in ") + weightTypeName(weights) +
         " train skip-gram with negative sampling (the batched or the subword kernel) only; use "
         "float32 weights (fp32) for CBOW, hierarchical softmax or the classic kernel");
  if (threads < 0 || threads > kMaxTrainThreads)
    fail("threads must be between 0 (all cores) and " + std::to_string(kMaxTrainThreads) +
         " (got " + std::to_string(threads) + ")");
}

int TrainConfig::blockNegativesFor() const {
  return blockNegatives > 0 ? blockNegatives : std::max(negative, (5 * combine + 3) / 4);
}

std::string TrainConfig::serialize() const {
  std::ostringstream out;
  out << "dim=" << dim << "\n"
      << "window=" << window << "\n"
      << "negative=" << negative << "\n"
      << "loss=" << (loss == Loss::NegativeSampling ? "ns" : "hs") << "\n"
      << "architecture=" << (architecture == Architecture::SkipGram ? "skipgram" : "cbow") << "\n"
      << "sample=" << exactNumber(sample) << "\n"
      << "alpha=" << exactNumber(alpha) << "\n"
      << "min_alpha=" << exactNumber(minAlpha) << "\n"
      << "epochs=" << epochs << "\n"
      << "min_count=" << minCount << "\n"
      << "max_vocab=" << maxVocab << "\n"
      << "threads=" << threads << "\n"
      << "seed=" << seed << "\n"
      << "kernel=" << (kernel == Kernel::Classic ? "classic" : "batched") << "\n"
      << "combine=" << combine << "\n"
      << "block_negatives=" << blockNegatives << "\n";
  // Written only when changed, so files of the default stay readable by older versions.
  if (nsExponent != 0.75) out << "ns_exponent=" << exactNumber(nsExponent) << "\n";
  if (!shrinkWindows) out << "shrink_windows=0\n";
  if (subwords)
    out << "subwords=1\n" << "minn=" << minn << "\n" << "maxn=" << maxn << "\n"
        << "bucket=" << bucket << "\n";
  if (weights != WeightType::Fp32) out << "weights=" << weightTypeName(weights) << "\n";
  return out.str();
}

TrainConfig TrainConfig::deserialize(const std::string& text) {
  TrainConfig c;
  // Configurations stored before context combining trained one window per block.
  c.combine = 1;
  std::istringstream in(text);
  std::string line;
  std::set<std::string> seen;
  int lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    if (line.empty()) continue;
    const auto eq = line.find('=');
    if (eq == std::string::npos)
      throw FormatError("training config line " + std::to_string(lineNo) + " is not key=value: '" +
                        line + "'");
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    // How the corpus was read ("corpus.locale=tr"): the trainer's record, checked
    // when resuming, not a training option.
    if (key.rfind("corpus.", 0) == 0) continue;
    if (!seen.insert(key).second) throw FormatError("training config: '" + key + "' appears twice");
    if (key == "dim")
      c.dim = parseInt<std::size_t>(key, value);
    else if (key == "window")
      c.window = parseInt<int>(key, value);
    else if (key == "negative")
      c.negative = parseInt<int>(key, value);
    else if (key == "loss") {
      if (value == "ns")
        c.loss = Loss::NegativeSampling;
      else if (value == "hs")
        c.loss = Loss::HierarchicalSoftmax;
      else
        throw FormatError("training config: 'loss' has the invalid value '" + value + "'");
    } else if (key == "architecture") {
      if (value == "skipgram")
        c.architecture = Architecture::SkipGram;
      else if (value == "cbow")
        c.architecture = Architecture::Cbow;
      else
        throw FormatError("training config: 'architecture' has the invalid value '" + value + "'");
    } else if (key == "sample")
      c.sample = parseDouble(key, value);
    else if (key == "alpha")
      c.alpha = parseDouble(key, value);
    else if (key == "min_alpha")
      c.minAlpha = parseDouble(key, value);
    else if (key == "epochs")
      c.epochs = parseInt<int>(key, value);
    else if (key == "min_count")
      c.minCount = parseInt<std::int64_t>(key, value);
    else if (key == "max_vocab")
      c.maxVocab = parseInt<std::size_t>(key, value);
    else if (key == "threads")
      c.threads = parseInt<int>(key, value);
    else if (key == "seed")
      c.seed = parseInt<std::uint64_t>(key, value);
    else if (key == "kernel") {
      if (value == "classic")
        c.kernel = Kernel::Classic;
      else if (value == "batched")
        c.kernel = Kernel::Batched;
      else
        throw FormatError("training config: 'kernel' has the invalid value '" + value + "'");
    } else if (key == "combine") {
      c.combine = parseInt<int>(key, value);
    } else if (key == "shrink_windows") {
      if (value != "0" && value != "1")
        throw FormatError("training config: 'shrink_windows' has the invalid value '" + value + "'");
      c.shrinkWindows = value == "1";
    } else if (key == "ns_exponent") {
      c.nsExponent = parseDouble(key, value);
    } else if (key == "subwords") {
      if (value != "0" && value != "1")
        throw FormatError("training config: 'subwords' has the invalid value '" + value + "'");
      c.subwords = value == "1";
    } else if (key == "minn") {
      c.minn = parseInt<int>(key, value);
    } else if (key == "maxn") {
      c.maxn = parseInt<int>(key, value);
    } else if (key == "bucket") {
      c.bucket = parseInt<std::uint32_t>(key, value);
    } else if (key == "weights") {
      if (value == "fp32")
        c.weights = WeightType::Fp32;
      else if (value == "bf16")
        c.weights = WeightType::Bf16;
      else if (value == "fp16")
        c.weights = WeightType::Fp16;
      else
        throw FormatError("training config: 'weights' has the invalid value '" + value + "'");
    } else if (key == "block_negatives") {
      c.blockNegatives = parseInt<int>(key, value);
    } else {
      throw FormatError("training config: unknown key '" + key + "' (written by a newer posvec?)");
    }
  }
  return c;
}

}  // namespace posvec
