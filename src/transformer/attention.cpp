// Scaled dot-product attention in double. The score matrix of each head is
// computed from power-of-two rescaled Q and K (exact), and the true scale is
// applied only to differences from the row maximum, so no input magnitude a
// double can hold turns a score into inf - inf = NaN.
#include "posvec/attention.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <random>

#include "memory_limit.hpp"
#include "posvec/error.hpp"

namespace posvec {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Uniform in [-bound, bound) from the top 53 bits of one draw, so the numbers
// do not depend on the standard library's distribution implementation.
double uniform(std::mt19937_64& rng, double bound) {
  const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
  return bound * (2.0 * u - 1.0);
}

// nn.Linear(in, out).reset_parameters(): weight and bias uniform in ±1/√in.
LinearMap randomLinear(std::mt19937_64& rng, std::size_t in, std::size_t out) {
  LinearMap m;
  const double bound = 1.0 / std::sqrt(static_cast<double>(in));
  m.weight.resize(static_cast<Eigen::Index>(out), static_cast<Eigen::Index>(in));
  for (Eigen::Index r = 0; r < m.weight.rows(); ++r)
    for (Eigen::Index c = 0; c < m.weight.cols(); ++c) m.weight(r, c) = uniform(rng, bound);
  m.bias.resize(static_cast<Eigen::Index>(out));
  for (Eigen::Index r = 0; r < m.bias.size(); ++r) m.bias(r) = uniform(rng, bound);
  return m;
}

// x · weightᵀ + bias, or for the identity map each head's slice of x (all of x
// when a head is as wide as the input).
MatrixD project(const LinearMap& map, const MatrixD& x, std::size_t heads, std::size_t headDim) {
  if (!map.identity()) {
    MatrixD y = x * map.weight.transpose();
    y.rowwise() += map.bias.transpose();
    return y;
  }
  const auto d = static_cast<std::size_t>(x.cols());
  if (heads * headDim == d) return x;
  MatrixD y(x.rows(), static_cast<Eigen::Index>(heads * headDim));
  for (std::size_t h = 0; h < heads; ++h)
    y.middleCols(static_cast<Eigen::Index>(h * headDim), static_cast<Eigen::Index>(headDim)) = x;
  return y;
}

// Exponent e with |m| · 2^-e in [1, 2) for the largest |entry|, 0 for all zeros.
int scaleExponent(const MatrixD& m) {
  const double a = m.size() ? m.cwiseAbs().maxCoeff() : 0.0;
  return a > 0 ? std::ilogb(a) : 0;
}

}  // namespace

Projection parseProjection(const std::string& name) {
  for (const auto& c : kProjectionNames)
    if (c.name == name) return c.value;
  throw ConfigError("unknown projection '" + name + "' (choose identity or random)");
}

std::string projectionName(Projection projection) {
  for (const auto& c : kProjectionNames)
    if (c.value == projection) return std::string(c.name);
  return "unknown";
}

PositionMode parsePositionMode(const std::string& name) {
  for (const auto& c : kPositionModeNames)
    if (c.name == name) return c.value;
  throw ConfigError("unknown positional mode '" + name +
                    "' (choose additive, rotary, alibi or none)");
}

std::string positionModeName(PositionMode mode) {
  for (const auto& c : kPositionModeNames)
    if (c.value == mode) return std::string(c.name);
  return "unknown";
}

std::size_t AttentionOptions::resolvedHeadDim(std::size_t dModel) const {
  return headDim ? headDim : (heads ? dModel / heads : 0);
}

void AttentionOptions::validate(std::size_t dModel) const {
  if (dModel == 0) throw ConfigError("attention needs input rows with at least one column");
  checkSettings(kAttentionSettings, *this);
  if (headDim == 0 && dModel % heads != 0)
    throw ConfigError(ErrorText("d_model " + std::to_string(dModel) + " is not divisible by " +
                                std::to_string(heads) +
                                " heads; choose a divisor or give each head its own size (")
                      << settingNamed(kAttentionSettings, "headDim") << ")");
  const std::size_t dk = resolvedHeadDim(dModel);
  if (projection == Projection::Identity && heads * dk != dModel && dk != dModel)
    throw ConfigError(
        ErrorText("identity projections read the input's own columns: heads x "
                  "head size (" +
                  std::to_string(heads) + " x " + std::to_string(dk) + ") must equal d_model " +
                  std::to_string(dModel) + ", or the head size must be d_model; use ")
        << settingNamed(kAttentionSettings, "projection") << " random for other sizes");
  if (maskAfterSoftmax && !causal)
    throw ConfigError(
        ErrorText("masking after the softmax is a variant of the causal mask: add ")
        << Setting{"causal", "it"});
  if (renormalize && !maskAfterSoftmax)
    throw ConfigError(ErrorText("renormalising only applies to the mask after the softmax (")
                      << Setting{"maskAfterSoftmax", "turn it on"} << ")");
  if (positional == PositionMode::Rotary) {
    if (dk % 2 != 0)
      throw ConfigError("rotary position embedding rotates pairs of columns: the head size (" +
                        std::to_string(dk) + ") must be even");
    if (rotaryEncoding == Encoding::Tutorial)
      throw ConfigError(
          "the tutorial encoding has no rotation (its sine and cosine columns use "
          "different frequencies): use interleaved or concatenated for rotary");
    PositionalOptions po;
    po.dim = dk;
    po.base = rotaryBase;
    po.encoding = rotaryEncoding;
    po.validate();
    if (rope) {
      rope->validate();
      if (rope->headDim != dk)
        throw ConfigError("the rotary configuration is for heads of " +
                          std::to_string(rope->headDim) + " columns but the attention heads have " +
                          std::to_string(dk) + " (match the head size)");
      if (rotaryEncoding != Encoding::Interleaved && rotaryEncoding != Encoding::Concatenated)
        throw ConfigError(
            "a rotary configuration rotates interleaved or concatenated pairs: choose one of those "
            "layouts");
    }
  } else if (rope) {
    throw ConfigError("a rotary configuration needs rotary positions");
  }
}

Attention::Attention(std::size_t dModel, AttentionOptions options)
    : dModel_(dModel), options_(options) {
  options_.validate(dModel_);
  headDim_ = options_.resolvedHeadDim(dModel_);
  if (options_.projection == Projection::Random) {
    // One generator, drawn in the order query, key, value, output (weight rows
    // first, then bias), so a seed fixes every matrix.
    std::mt19937_64 rng(options_.seed);
    const std::size_t inner = options_.heads * headDim_;
    projections_.query = randomLinear(rng, dModel_, inner);
    projections_.key = randomLinear(rng, dModel_, inner);
    projections_.value = randomLinear(rng, dModel_, inner);
    if (options_.outputProjection) projections_.output = randomLinear(rng, inner, dModel_);
  }
}

void stableSoftmax(double* row, const bool* allowed, std::size_t n) {
  double m = -kInf;
  bool any = false;
  for (std::size_t j = 0; j < n; ++j) {
    if (!allowed[j]) continue;
    if (std::isnan(row[j])) throw InputError("a NaN attention score (the input holds NaN)");
    any = true;
    m = std::max(m, row[j]);
  }
  if (!any) throw InputError("a softmax row with every entry masked");
  double sum = 0;
  for (std::size_t j = 0; j < n; ++j) {
    double w = 0;
    if (allowed[j]) {
      if (m == kInf)
        w = row[j] == kInf ? 1.0 : 0.0;
      else if (m == -kInf)
        w = 1.0;  // every allowed score is -inf: no preference
      else
        w = std::exp(row[j] - m);  // <= 1, and the maximum gives exactly 1
    }
    row[j] = w;
    sum += w;
  }
  for (std::size_t j = 0; j < n; ++j) row[j] /= sum;
}

void Attention::checkMemory(std::size_t tokens, std::size_t results, double bytesPerWeight) const {
  // Kept: a T x T map a head a result. While compute() runs: one more T x T score
  // matrix, and Q, K, V, one head's copies of Q and K, the heads and the output.
  const double t = static_cast<double>(tokens), h = static_cast<double>(options_.heads);
  const double dk = static_cast<double>(headDim_), r = static_cast<double>(std::max<std::size_t>(results, 1));
  const double weights = r * h * t * t;
  const double bytes = weights * (sizeof(double) + bytesPerWeight) + t * t * sizeof(double) +
                       r * t * (4 * h * dk + 2 * dk + static_cast<double>(dModel_)) * sizeof(double);
  const double available = detail::physicalMemoryBytes();
  if (bytes <= available) return;
  throw ConfigError("attention over " +
                    (results > 1 ? std::to_string(results) + " sentences of up to "
                                 : std::string("a sentence of ")) +
                    std::to_string(tokens) + " tokens needs " + detail::formatBytes(bytes) + " (" +
                    std::to_string(options_.heads) + " map" + (options_.heads == 1 ? "" : "s") +
                    " of " + std::to_string(tokens) + " x " + std::to_string(tokens) +
                    " weights" + (results > 1 ? " a sentence" : "") +
                    "), more than this machine's " + detail::formatBytes(available) +
                    " of memory; split the sentence or use fewer heads");
}

AttentionResult Attention::compute(const MatrixD& x, std::int64_t start, std::size_t length) const {
  if (static_cast<std::size_t>(x.cols()) != dModel_)
    throw InputError("the attention input has " + std::to_string(x.cols()) +
                     " columns but the attention was built for d_model " + std::to_string(dModel_));
  if (!x.allFinite()) throw InputError("the attention input holds a NaN or infinite value");
  if (start < 0)
    throw ConfigError(ErrorText::about(settingNamed(kPositionArguments, "start"))
                      << " must be 0 or more");
  const Eigen::Index T = x.rows();
  const Eigen::Index n = std::min<Eigen::Index>(
      T, static_cast<Eigen::Index>(std::min<std::size_t>(length, static_cast<std::size_t>(T))));
  const std::size_t H = options_.heads, dk = headDim_;
  const auto dkI = static_cast<Eigen::Index>(dk);
  checkMemory(static_cast<std::size_t>(T));

  MatrixD q = project(projections_.query, x, H, dk);
  MatrixD k = project(projections_.key, x, H, dk);
  const MatrixD v = project(projections_.value, x, H, dk);

  // Rotary angles are position times frequency in double: from 2^53 on, neighbouring
  // positions get the same angle and every relative rotation vanishes (the maps came
  // out as with no positions, in silence). The additive encoding's bound, here too.
  if (options_.positional == PositionMode::Rotary &&
      start > (std::int64_t{1} << 53) - static_cast<std::int64_t>(T))
    throw ConfigError("positions must stay below 2^53 (start " + std::to_string(start) +
                      " + length " + std::to_string(T) + "), where double stops counting exactly");
  if (options_.positional == PositionMode::Rotary && T > 0) {
    // Row vector times M_p rotates each pair (a, b) to (a cos θ - b sin θ,
    // a sin θ + b cos θ), RoPE's convention; q_m · k_n then depends on n - m only,
    // because M_mᵀ M_n = M_{n-m}.
    PositionalOptions po;
    po.dim = dk;
    po.base = options_.rotaryBase;
    po.encoding = options_.rotaryEncoding;
    const PositionalEncoder enc(po);
    if (options_.rope) {
      // transformers' apply_rotary_pos_emb on the first rd columns of each head,
      // with cos and sin multiplied by the attention factor.
      const RopeFrequencies f = ropeFrequencies(*options_.rope);
      const std::size_t half = f.dim / 2;
      const bool halves = options_.rotaryEncoding == Encoding::Concatenated;
      for (Eigen::Index t = 0; t < n; ++t) {
        const double pos = static_cast<double>(start + t);
        for (std::size_t p = 0; p < half; ++p) {
          const double c = std::cos(pos * f.invFreq[p]) * f.attentionFactor;
          const double sn = std::sin(pos * f.invFreq[p]) * f.attentionFactor;
          const std::size_t ia = halves ? p : 2 * p, ib = halves ? p + half : 2 * p + 1;
          for (std::size_t h = 0; h < H; ++h) {
            for (MatrixD* m : {&q, &k}) {
              const auto a = static_cast<Eigen::Index>(h * dk + ia),
                         b = static_cast<Eigen::Index>(h * dk + ib);
              const double xa = (*m)(t, a), xb = (*m)(t, b);
              (*m)(t, a) = xa * c - xb * sn;
              (*m)(t, b) = xa * sn + xb * c;
            }
          }
        }
      }
    }
    for (Eigen::Index t = 0; t < n && !options_.rope; ++t) {
      const MatrixD rot = enc.relativeShift(start + t);
      for (std::size_t h = 0; h < H; ++h) {
        const auto c0 = static_cast<Eigen::Index>(h * dk);
        q.row(t).segment(c0, dkI) = q.row(t).segment(c0, dkI) * rot;
        k.row(t).segment(c0, dkI) = k.row(t).segment(c0, dkI) * rot;
      }
    }
  }

  std::vector<double> slopes;
  if (options_.positional == PositionMode::Alibi) slopes = alibiSlopes(H);

  AttentionResult result;
  result.heads = MatrixD::Zero(T, static_cast<Eigen::Index>(H * dk));
  const double invSqrtDk = 1.0 / std::sqrt(static_cast<double>(dk));
  std::vector<char> allowedBuf(static_cast<std::size_t>(std::max<Eigen::Index>(T, 1)));
  bool* allowed = reinterpret_cast<bool*>(allowedBuf.data());
  for (std::size_t h = 0; h < H; ++h) {
    const auto c0 = static_cast<Eigen::Index>(h * dk);
    MatrixD qh = q.block(0, c0, n, dkI), kh = k.block(0, c0, n, dkI);
    const int eq = scaleExponent(qh), ek = scaleExponent(kh);
    for (Eigen::Index i = 0; i < qh.size(); ++i) qh.data()[i] = std::ldexp(qh.data()[i], -eq);
    for (Eigen::Index i = 0; i < kh.size(); ++i) kh.data()[i] = std::ldexp(kh.data()[i], -ek);
    // True scores are s · factor; factor may overflow to inf for huge inputs,
    // which only sends non-maximal entries to -inf (weight 0).
    const double factor = std::ldexp(invSqrtDk, eq + ek);
    const MatrixD s = qh * kh.transpose();

    MatrixD w = MatrixD::Zero(T, T);
    std::vector<double> row(static_cast<std::size_t>(n));
    for (Eigen::Index i = 0; i < n; ++i) {
      const bool standardCausal = options_.causal && !options_.maskAfterSoftmax;
      double m = -kInf;
      for (Eigen::Index j = 0; j < n; ++j) {
        allowed[j] = !(standardCausal && j > i);
        if (allowed[j]) m = std::max(m, s(i, j));
      }
      for (Eigen::Index j = 0; j < n; ++j) {
        const double diff = s(i, j) - m;
        row[static_cast<std::size_t>(j)] = diff == 0 ? 0.0 : diff * factor;
        // ALiBi: the bias is added to the scaled score; the row maximum already
        // subtracted is a constant the softmax ignores.
        if (!slopes.empty())
          row[static_cast<std::size_t>(j)] -=
              slopes[h] * static_cast<double>(i > j ? i - j : j - i);
      }
      stableSoftmax(row.data(), allowed, static_cast<std::size_t>(n));
      if (options_.maskAfterSoftmax) {
        double sum = 0;
        for (Eigen::Index j = 0; j < n; ++j) {
          if (j > i) row[static_cast<std::size_t>(j)] = 0;
          sum += row[static_cast<std::size_t>(j)];
        }
        // sum > 0: the diagonal entry's weight is exp(s_ii - max), positive unless
        // the scores differ by more than ~745, where renormalising cannot help.
        if (options_.renormalize && sum > 0)
          for (Eigen::Index j = 0; j <= i; ++j) row[static_cast<std::size_t>(j)] /= sum;
      }
      for (Eigen::Index j = 0; j < n; ++j) w(i, j) = row[static_cast<std::size_t>(j)];
    }
    result.heads.block(0, c0, n, dkI) = w.topLeftCorner(n, n) * v.block(0, c0, n, dkI);
    result.weights.push_back(std::move(w));
  }

  if (projections_.output.identity()) {
    result.output = result.heads;
  } else {
    result.output = MatrixD::Zero(T, static_cast<Eigen::Index>(dModel_));
    result.output.topRows(n) = result.heads.topRows(n) * projections_.output.weight.transpose();
    result.output.topRows(n).rowwise() += projections_.output.bias.transpose();
  }
  return result;
}

// ---- from a sentence to attention input ------------------------------------

UnknownWords parseUnknownWords(const std::string& name) {
  if (name == "error") return UnknownWords::Error;
  if (name == "zero") return UnknownWords::Zero;
  if (name == "token") return UnknownWords::Token;
  throw ConfigError(ErrorText("unknown ") << settingNamed(kLookupArguments, "unk")
                                          << " '" + name + "' (choose error, zero or token)");
}

Eigen::RowVectorXf unknownTokenRow(const Embeddings& embeddings) {
  // Accumulated in double: a float sum over a large vocabulary loses digits.
  if (embeddings.size() == 0)
    return Eigen::RowVectorXf::Zero(static_cast<Eigen::Index>(embeddings.dim()));
  return embeddings.vectors().cast<double>().colwise().mean().cast<float>();
}

namespace {

LookedUp lookUp(const Embeddings& embeddings, const SubwordModel* subwords, const Sentence& tokens,
                UnknownWords unk) {
  if (tokens.empty()) throw InputError("the sentence has no tokens to look up");
  LookedUp out;
  out.tokens = tokens;
  const auto d = static_cast<Eigen::Index>(subwords ? subwords->dim() : embeddings.dim());
  out.rows = MatrixF::Zero(static_cast<Eigen::Index>(tokens.size()), d);
  Eigen::RowVectorXf mean;
  for (std::size_t t = 0; t < tokens.size(); ++t) {
    const auto id = embeddings.find(tokens[t]);
    if (id) {
      out.rows.row(static_cast<Eigen::Index>(t)) = embeddings.vectors().row(*id);
      continue;
    }
    out.unknown.push_back(t);
    if (subwords) {
      out.built.push_back(t);
      out.rows.row(static_cast<Eigen::Index>(t)) = subwords->vector(tokens[t]);
      continue;
    }
    switch (unk) {
      case UnknownWords::Error: {
        // Vectors trained without punctuation miss every mark: say how to drop them.
        const std::string& w = tokens[t];
        const bool punct = std::none_of(w.begin(), w.end(), [](char ch) {
          return std::isalnum(static_cast<unsigned char>(ch)) || (ch & 0x80);
        });
        const Setting policy = settingNamed(kLookupArguments, "unk");
        ErrorText message("unknown word '" + w + "' (token " + std::to_string(t + 1) +
                          ") is not in the vectors; use ");
        message << policy << " zero or " << policy
                << " token to map it to a zero or a shared out-of-vocabulary row";
        if (punct) message << ", or " << Setting{"keepPunctuation", "drop punctuation"};
        throw InputError(message);
      }
      case UnknownWords::Zero:
        break;
      case UnknownWords::Token:
        if (mean.size() == 0) mean = unknownTokenRow(embeddings);
        out.rows.row(static_cast<Eigen::Index>(t)) = mean;
        out.tokens[t] = "<unk>";
        break;
    }
  }
  return out;
}

}  // namespace

LookedUp lookUpTokens(const Embeddings& embeddings, const Sentence& tokens, UnknownWords unk) {
  return lookUp(embeddings, nullptr, tokens, unk);
}

LookedUp lookUpTokens(const LookupVectors& vectors, const Sentence& tokens, UnknownWords unk) {
  return lookUp(vectors.vectors, vectors.subwords ? &*vectors.subwords : nullptr, tokens, unk);
}

MatrixD attentionInput(const MatrixF& rows, PositionMode mode, const PositionalEncoder& encoder,
                       std::int64_t start, Scale scale) {
  if (mode == PositionMode::Additive) return encoder.encode(rows, start, scale);
  if (start < 0)
    throw ConfigError(ErrorText::about(settingNamed(kPositionArguments, "start"))
                      << " must be 0 or more");
  return rows.cast<double>() * scale.factor(static_cast<std::size_t>(rows.cols()));
}

}  // namespace posvec
