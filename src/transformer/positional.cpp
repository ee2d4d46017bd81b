#include "posvec/positional.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>

#include "huge_pages.hpp"
#include "memory_limit.hpp"
#include "posvec/error.hpp"
#include "posvec/vector_math.hpp"

namespace posvec {

namespace {

// Rows are produced by rotating each (sin, cos) pair by its per-row angle step,
// re-anchored with a direct sin/cos at every multiple of this many positions.
// Anchors sit at absolute positions, so a row depends only on its position.
// Over 256 steps the rotations drift by ~1e-14, far below float rounding
// (measured by tools/bench/positional_bench), and the direct sin/cos calls,
// the whole cost of a naive fill, drop to 1/256 of the rows.
constexpr std::int64_t kAnchorInterval = 256;

// Positions up to 2^53 are exact in double; beyond, p * frequency loses the
// integer itself.
constexpr std::int64_t kMaxPosition = std::int64_t{1} << 53;

using detail::formatBytes;
using detail::physicalMemoryBytes;

// Doubles of the per-dimension tables the constructor builds (two frequency tables of
// dim/2, the state frequencies and their sine and cosine steps: dim/2 each, dim for
// the tutorial layout) and the two rows of scratch fillRows keeps.
double tableBytes(std::size_t dim, Encoding encoding) {
  const double half = static_cast<double>(dim / 2);
  const double m = encoding == Encoding::Tutorial ? static_cast<double>(dim) : half;
  return (2 * half + 5 * m) * sizeof(double);
}

// Throws before the constructor builds anything when its tables cannot fit.
void checkTables(std::size_t dim, Encoding encoding) {
  const double bytes = tableBytes(dim, encoding);
  const double available = physicalMemoryBytes();
  if (bytes > available)
    throw ConfigError(ErrorText::about(settingNamed(kPositionalSettings, "dModel"))
                      << " " << std::to_string(dim) << " needs " << formatBytes(bytes)
                      << " for its frequency tables, more than this machine's "
                      << formatBytes(available) << " of memory; use a smaller dimension");
}

// Throws before any allocation when len x dim values of `scalarBytes` cannot fit.
void checkSize(std::int64_t start, std::size_t len, std::size_t dim, std::size_t scalarBytes) {
  if (len == 0)
    throw ConfigError(ErrorText::about(settingNamed(kPositionArguments, "len"))
                      << " must be at least 1");
  if (start < 0)
    throw ConfigError(ErrorText::about(settingNamed(kPositionArguments, "start"))
                      << " must be 0 or more (got " << std::to_string(start) << ")");
  if (len > static_cast<std::size_t>(kMaxPosition) ||
      start > kMaxPosition - static_cast<std::int64_t>(len))
    throw ConfigError("positions must stay below 2^53 (start " + std::to_string(start) +
                      " + length " + std::to_string(len) +
                      "), where double stops counting exactly");
  const double bytes =
      static_cast<double>(len) * static_cast<double>(dim) * static_cast<double>(scalarBytes);
  const double available = physicalMemoryBytes();
  if (bytes > available)
    throw ConfigError("a " + std::to_string(len) + " x " + std::to_string(dim) + " matrix of " +
                      (scalarBytes == 4 ? "float32" : "float64") + " needs " + formatBytes(bytes) +
                      ", more than this machine's " + formatBytes(available) +
                      " of memory; use a smaller length or dimension");
}

// base^(-exponentNum / dim), evaluated in long double and rounded once to double,
// so each frequency is the double nearest the exact value.
double inverseFrequency(double base, std::size_t exponentNum, std::size_t dim) {
  const long double e = static_cast<long double>(exponentNum) / static_cast<long double>(dim);
  return static_cast<double>(std::pow(static_cast<long double>(base), -e));
}

}  // namespace

Encoding parseEncoding(const std::string& name) {
  if (name == "interleaved") return Encoding::Interleaved;
  if (name == "concatenated") return Encoding::Concatenated;
  if (name == "book") return Encoding::Book;
  if (name == "tutorial") return Encoding::Tutorial;
  if (name == "timescale") return Encoding::Timescale;
  if (name == "fairseq") return Encoding::Fairseq;
  throw ConfigError("unknown encoding '" + name +
                    "' (choose interleaved, concatenated, book, tutorial, timescale or fairseq)");
}

std::string encodingName(Encoding encoding) {
  switch (encoding) {
    case Encoding::Interleaved:
      return "interleaved";
    case Encoding::Concatenated:
      return "concatenated";
    case Encoding::Book:
      return "book";
    case Encoding::Tutorial:
      return "tutorial";
    case Encoding::Timescale:
      return "timescale";
    case Encoding::Fairseq:
      return "fairseq";
  }
  return "unknown";
}

void PositionalOptions::validate() const {
  const auto about = [](std::string_view name) {
    return ErrorText::about(settingNamed(kPositionalSettings, name));
  };
  if (dim == 0) throw ConfigError(about("dModel") << " must be at least 2 (got 0)");
  if (dim % 2 != 0)
    throw ConfigError(about("dModel") << " must be even: each sine column is paired with a cosine "
                                         "column of the same frequency (got "
                                      << std::to_string(dim) << ")");
  if (!std::isfinite(base) || base <= 1.0) {
    std::ostringstream s;
    s << " must be a finite number greater than 1 (got " << base << ")";
    throw ConfigError(about("positionalBase") << s.str());
  }
  if (encoding == Encoding::Fairseq && paddingIdx < 0)
    throw ConfigError(about("paddingIdx") << " must be 0 or more (got " << std::to_string(paddingIdx)
                                          << ")");
}

Scale Scale::parse(const std::string& text) {
  Scale s;
  if (text == "sqrt") return s;
  if (text == "none") {
    s.kind = Kind::None;
    return s;
  }
  double v = 0;
  const char* first = text.data();
  const char* last = first + text.size();
  const auto [ptr, ec] = std::from_chars(first, last, v);
  if (text.empty() || ec != std::errc() || ptr != last || !std::isfinite(v))
    throw ConfigError("invalid scale '" + text + "' (use sqrt, none or a finite number)");
  s.kind = Kind::Value;
  s.value = v;
  return s;
}

double Scale::factor(std::size_t dim) const {
  switch (kind) {
    case Kind::Sqrt:
      return std::sqrt(static_cast<double>(dim));
    case Kind::None:
      return 1.0;
    case Kind::Value:
      return value;
  }
  return 1.0;
}

PositionalEncoder::PositionalEncoder(PositionalOptions options) : options_(options) {
  options_.validate();
  checkTables(options_.dim, options_.encoding);
  const std::size_t d = options_.dim, half = d / 2;
  invFreqSin_.resize(half);
  invFreqCos_.resize(half);
  for (std::size_t k = 0; k < half; ++k) {
    switch (options_.encoding) {
      case Encoding::Interleaved:
      case Encoding::Concatenated:  // column 2k of the interleaved layout: exponent 2k/d
        invFreqSin_[k] = invFreqCos_[k] = inverseFrequency(options_.base, 2 * k, d);
        break;
      case Encoding::Book:  // i = 2k is used as the exponent's "k": 2i/d = 4k/d
        invFreqSin_[k] = invFreqCos_[k] = inverseFrequency(options_.base, 4 * k, d);
        break;
      case Encoding::Tutorial:  // sin at i = 2k: 2i/d; cos at i + 1: 2(i + 1)/d
        invFreqSin_[k] = inverseFrequency(options_.base, 4 * k, d);
        invFreqCos_[k] = inverseFrequency(options_.base, 4 * k + 2, d);
        break;
      case Encoding::Timescale:
      case Encoding::Fairseq:  // exponent k / (d/2 - 1); tensor2tensor guards d/2 = 1 with max(.,
                               // 1)
        invFreqSin_[k] = invFreqCos_[k] =
            inverseFrequency(options_.base, k, std::max<std::size_t>(half - 1, 1));
        break;
    }
  }
  if (options_.encoding == Encoding::Tutorial) {
    stateFreq_.resize(d);
    for (std::size_t k = 0; k < half; ++k) {
      stateFreq_[2 * k] = invFreqSin_[k];
      stateFreq_[2 * k + 1] = invFreqCos_[k];
    }
  } else {
    stateFreq_ = invFreqSin_;
  }
  stepSin_.resize(stateFreq_.size());
  stepCos_.resize(stateFreq_.size());
  for (std::size_t j = 0; j < stateFreq_.size(); ++j) {
    stepSin_[j] = std::sin(stateFreq_[j]);
    stepCos_[j] = std::cos(stateFreq_[j]);
  }
}

template <typename T>
void PositionalEncoder::fillRows(std::int64_t start, std::size_t len, T* out) const {
  const std::size_t d = options_.dim, half = d / 2, m = stateFreq_.size();
  std::vector<double> sBuf(m), cBuf(m);
  double* __restrict s = sBuf.data();
  double* __restrict c = cBuf.data();
  const double* __restrict freq = stateFreq_.data();
  const double* __restrict stepS = stepSin_.data();
  const double* __restrict stepC = stepCos_.data();
  const Encoding enc = options_.encoding;
  const std::int64_t end = start + static_cast<std::int64_t>(len);

  auto writeRow = [&](T* __restrict row) {
    switch (enc) {
      case Encoding::Interleaved:
      case Encoding::Book:
        for (std::size_t k = 0; k < half; ++k) {
          row[2 * k] = static_cast<T>(s[k]);
          row[2 * k + 1] = static_cast<T>(c[k]);
        }
        break;
      case Encoding::Concatenated:
      case Encoding::Timescale:
      case Encoding::Fairseq:
        for (std::size_t k = 0; k < half; ++k) {
          row[k] = static_cast<T>(s[k]);
          row[half + k] = static_cast<T>(c[k]);
        }
        break;
      case Encoding::Tutorial:
        for (std::size_t k = 0; k < half; ++k) {
          row[2 * k] = static_cast<T>(s[2 * k]);
          row[2 * k + 1] = static_cast<T>(c[2 * k + 1]);
        }
        break;
    }
  };

  std::int64_t p = start;
  while (p < end) {
    const std::int64_t anchor = p - p % kAnchorInterval;
    const double a = static_cast<double>(anchor);
    for (std::size_t j = 0; j < m; ++j) {
      const double angle = a * freq[j];
      s[j] = std::sin(angle);
      c[j] = std::cos(angle);
    }
    const std::int64_t blockEnd = std::min(anchor + kAnchorInterval, end);
    for (std::int64_t q = anchor; q < blockEnd; ++q) {
      if (q >= p) writeRow(out + static_cast<std::size_t>(q - start) * d);
      if (q + 1 == blockEnd) break;
      // Angle addition: (sin, cos)(x + step) from (sin, cos)(x).
      for (std::size_t j = 0; j < m; ++j) {
        const double sj = s[j], cj = c[j];
        s[j] = sj * stepC[j] + cj * stepS[j];
        c[j] = cj * stepC[j] - sj * stepS[j];
      }
    }
    p = blockEnd;
  }
  if (enc == Encoding::Fairseq && options_.paddingIdx >= start && options_.paddingIdx < end)
    std::fill_n(out + static_cast<std::size_t>(options_.paddingIdx - start) * d, d, T(0));
}

void checkPositionalMemory(const PositionalOptions& options, std::int64_t start, std::size_t len,
                           std::size_t scalarBytes) {
  options.validate();
  checkTables(options.dim, options.encoding);
  checkSize(start, len, options.dim, scalarBytes);
}

Eigen::RowVectorXd PositionalEncoder::row(std::int64_t position) const {
  checkSize(position, 1, options_.dim, sizeof(double));
  Eigen::RowVectorXd r(static_cast<Eigen::Index>(options_.dim));
  fillRows(position, 1, r.data());
  return r;
}

MatrixD PositionalEncoder::matrix(std::int64_t start, std::size_t len) const {
  checkSize(start, len, options_.dim, sizeof(double));
  MatrixD m(static_cast<Eigen::Index>(len), static_cast<Eigen::Index>(options_.dim));
  detail::adviseHugePages(m.data(), len * options_.dim * sizeof(double));
  fillRows(start, len, m.data());
  return m;
}

MatrixF PositionalEncoder::matrixFloat(std::int64_t start, std::size_t len) const {
  checkSize(start, len, options_.dim, sizeof(float));
  MatrixF m(static_cast<Eigen::Index>(len), static_cast<Eigen::Index>(options_.dim));
  detail::adviseHugePages(m.data(), len * options_.dim * sizeof(float));
  fillRows(start, len, m.data());
  return m;
}

void PositionalEncoder::fill(std::int64_t start, MatrixD& out) const {
  if (static_cast<std::size_t>(out.cols()) != options_.dim)
    throw InputError("the output matrix has " + std::to_string(out.cols()) +
                     " columns but d_model is " + std::to_string(options_.dim));
  if (out.rows() == 0) return;
  checkSize(start, static_cast<std::size_t>(out.rows()), options_.dim, sizeof(double));
  fillRows(start, static_cast<std::size_t>(out.rows()), out.data());
}

void PositionalEncoder::fill(std::int64_t start, MatrixF& out) const {
  if (static_cast<std::size_t>(out.cols()) != options_.dim)
    throw InputError("the output matrix has " + std::to_string(out.cols()) +
                     " columns but d_model is " + std::to_string(options_.dim));
  if (out.rows() == 0) return;
  checkSize(start, static_cast<std::size_t>(out.rows()), options_.dim, sizeof(float));
  fillRows(start, static_cast<std::size_t>(out.rows()), out.data());
}

const MatrixD& PositionalEncoder::cached(std::size_t n) {
  const std::size_t have = static_cast<std::size_t>(cache_.rows());
  if (n <= have) return cache_;
  // Geometric growth keeps a sequence of ever-longer requests linear overall.
  std::size_t want = std::max(n, have + have / 2);
  try {
    checkSize(0, want, options_.dim, sizeof(double));
  } catch (const ConfigError&) {
    want = n;  // the exact request may still fit
    checkSize(0, want, options_.dim, sizeof(double));
  }
  MatrixD grown(static_cast<Eigen::Index>(want), static_cast<Eigen::Index>(options_.dim));
  detail::adviseHugePages(grown.data(), want * options_.dim * sizeof(double));
  if (have > 0) grown.topRows(static_cast<Eigen::Index>(have)) = cache_;
  fillRows(static_cast<std::int64_t>(have), want - have, grown.data() + have * options_.dim);
  cache_.swap(grown);
  return cache_;
}

double PositionalEncoder::similarity(std::int64_t p, std::int64_t q) const {
  const Eigen::RowVectorXd a = row(p), b = row(q);
  return cosine(a.data(), b.data(), options_.dim);
}

std::int64_t PositionalEncoder::positionOffset() const {
  return options_.encoding == Encoding::Fairseq ? options_.paddingIdx + 1 : 0;
}

namespace {
// start + offset, refusing the sums checkSize could not see (signed overflow).
std::int64_t offsetStart(std::int64_t start, std::int64_t offset) {
  if (start > kMaxPosition || offset > kMaxPosition - std::max<std::int64_t>(start, 0))
    throw ConfigError("positions must stay below 2^53 (start " + std::to_string(start) +
                      " + offset " + std::to_string(offset) + ")");
  return start + offset;
}
}  // namespace

MatrixD PositionalEncoder::encode(const MatrixF& rows, std::int64_t start, Scale scale) const {
  if (static_cast<std::size_t>(rows.cols()) != options_.dim)
    throw InputError("the embedding rows have " + std::to_string(rows.cols()) +
                     " columns but the encoder's d_model is " + std::to_string(options_.dim));
  const double f = scale.factor(options_.dim);
  if (rows.rows() == 0) return MatrixD(0, static_cast<Eigen::Index>(options_.dim));
  MatrixD out = matrix(offsetStart(start, positionOffset()), static_cast<std::size_t>(rows.rows()));
  out += rows.cast<double>() * f;
  return out;
}

std::vector<MatrixD> PositionalEncoder::encodeBatch(const std::vector<MatrixF>& sequences,
                                                    std::int64_t start, Scale scale,
                                                    bool encodePadding) const {
  std::size_t longest = 0;
  for (std::size_t i = 0; i < sequences.size(); ++i) {
    if (static_cast<std::size_t>(sequences[i].cols()) != options_.dim)
      throw InputError("sequence " + std::to_string(i) + " of the batch has " +
                       std::to_string(sequences[i].cols()) +
                       " columns but the encoder's d_model is " + std::to_string(options_.dim));
    longest = std::max(longest, static_cast<std::size_t>(sequences[i].rows()));
  }
  std::vector<MatrixD> out;
  out.reserve(sequences.size());
  const auto d = static_cast<Eigen::Index>(options_.dim);
  const auto L = static_cast<Eigen::Index>(longest);
  if (longest == 0) {
    for (std::size_t i = 0; i < sequences.size(); ++i) out.emplace_back(0, d);
    return out;
  }
  const MatrixD pe = matrix(offsetStart(start, positionOffset()), longest);
  const double f = scale.factor(options_.dim);
  for (const MatrixF& seq : sequences) {
    const Eigen::Index n = seq.rows();
    MatrixD m(L, d);
    m.topRows(n) = seq.cast<double>() * f + pe.topRows(n);
    if (encodePadding)
      m.bottomRows(L - n) = pe.bottomRows(L - n);
    else
      m.bottomRows(L - n).setZero();
    out.push_back(std::move(m));
  }
  return out;
}

MatrixD PositionalEncoder::relativeShift(std::int64_t k) const {
  if (options_.encoding == Encoding::Tutorial)
    throw ConfigError(
        "the tutorial encoding has no relative-shift rotation: its sine and cosine "
        "columns use different frequencies (use interleaved, concatenated or book)");
  const std::size_t d = options_.dim, half = d / 2;
  checkSize(0, d, d, sizeof(double));  // a d x d matrix
  MatrixD m = MatrixD::Zero(static_cast<Eigen::Index>(d), static_cast<Eigen::Index>(d));
  const bool concat = options_.encoding == Encoding::Concatenated ||
                      options_.encoding == Encoding::Timescale ||
                      options_.encoding == Encoding::Fairseq;
  for (std::size_t j = 0; j < half; ++j) {
    const double angle = static_cast<double>(k) * invFreqSin_[j];
    const double cs = std::cos(angle), sn = std::sin(angle);
    const auto si = static_cast<Eigen::Index>(concat ? j : 2 * j);             // sine column
    const auto ci = static_cast<Eigen::Index>(concat ? half + j : 2 * j + 1);  // cosine column
    // sin(x + a) = sin x cos a + cos x sin a;  cos(x + a) = cos x cos a - sin x sin a
    m(si, si) = cs;
    m(si, ci) = sn;
    m(ci, si) = -sn;
    m(ci, ci) = cs;
  }
  return m;
}

}  // namespace posvec
