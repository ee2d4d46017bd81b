#include "posvec/analysis.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>

#include "posvec/error.hpp"

namespace posvec {

namespace {

Eigen::RowVectorXd toDouble(const Eigen::RowVectorXf& v) { return v.cast<double>(); }

double cosineD(const Eigen::RowVectorXd& x, const Eigen::RowVectorXd& y) {
  return cosine(x.data(), y.data(), static_cast<std::size_t>(x.size()));
}

void checkDim(const Eigen::RowVectorXf& v, const PositionalEncoder& encoder, const char* what) {
  if (static_cast<std::size_t>(v.size()) != encoder.options().dim)
    throw InputError(std::string(what) + " has dimension " + std::to_string(v.size()) +
                     " but the positional encoding has d_model " +
                     std::to_string(encoder.options().dim) + " (use the vectors' dimension)");
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

std::string scaleLabel(double factor, std::size_t dim) {
  const double root = std::sqrt(static_cast<double>(dim));
  if (factor == 0) return "0";
  if (factor == 1) return "1";
  if (std::abs(factor - root) < 1e-12 * root) return "sqrt(d)";
  if (std::abs(factor - 2 * root) < 1e-12 * root) return "2 sqrt(d)";
  return number(factor);
}

std::string toString(const Scale& scale) {
  switch (scale.kind) {
    case Scale::Kind::Sqrt:
      return "sqrt";
    case Scale::Kind::None:
      return "none";
    case Scale::Kind::Value:
      break;
  }
  return number(scale.value);
}

double SweepScale::factor(std::size_t dim) const {
  return ofRootDim ? multiple * std::sqrt(static_cast<double>(dim)) : multiple;
}

std::string SweepScale::name() const {
  if (!ofRootDim) return number(multiple);
  return multiple == 1 ? "sqrt(d)" : number(multiple) + " sqrt(d)";
}

const std::vector<std::string>& studySentenceWords() {
  static const std::vector<std::string> words = {"the",   "black", "cat", "sat",   "on",  "the",
                                                 "couch", "and",   "the", "brown", "dog", "slept",
                                                 "on",    "the",   "rug", "."};
  return words;
}

WordAt parseWordAt(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos)
    throw ConfigError("placed word '" + text + "' has no colon: write WORD:POSITION, e.g. black:2");
  WordAt w;
  w.word = text.substr(0, colon);
  const std::string pos = text.substr(colon + 1);
  if (w.word.empty())
    throw ConfigError("placed word '" + text + "' has an empty word: write WORD:POSITION");
  if (pos.empty() || pos.size() > 12 ||
      !std::all_of(pos.begin(), pos.end(), [](char c) { return c >= '0' && c <= '9'; }))
    throw ConfigError("placed word '" + text + "': position '" + pos +
                      "' is not a non-negative integer (write WORD:POSITION, e.g. black:2)");
  w.position = std::stoll(pos);
  return w;
}

std::string toString(const WordAt& w) { return w.word + ":" + std::to_string(w.position); }

double combinedSimilarity(const Eigen::RowVectorXf& a, std::int64_t pa, const Eigen::RowVectorXf& b,
                          std::int64_t pb, const PositionalEncoder& encoder, double scale) {
  checkDim(a, encoder, "the first vector");
  checkDim(b, encoder, "the second vector");
  const Eigen::RowVectorXd x = toDouble(a) * scale + encoder.row(pa);
  const Eigen::RowVectorXd y = toDouble(b) * scale + encoder.row(pb);
  return cosineD(x, y);
}

std::vector<PairSimilarity> studySimilarities(const Embeddings& embeddings,
                                              const std::vector<WordAt>& words,
                                              const std::vector<Encoding>& encodings, Scale scale,
                                              double base) {
  if (words.size() < 2)
    throw ConfigError("the study needs at least two placed words (WORD:POSITION)");
  std::vector<Eigen::RowVectorXf> vectors;
  for (const auto& w : words) {
    if (!embeddings.find(w.word))
      throw InputError("placed word '" + toString(w) + "': the word '" + w.word +
                       "' is not in the vocabulary (" + std::to_string(embeddings.size()) +
                       " words); pick a word of the corpus");
    vectors.push_back(embeddings.vector(w.word));
  }
  std::vector<PositionalEncoder> encoders;
  for (Encoding e : encodings) {
    PositionalOptions o;
    o.dim = embeddings.dim();
    o.base = base;
    o.encoding = e;
    encoders.emplace_back(o);
  }
  const double factor = scale.factor(embeddings.dim());
  std::vector<PairSimilarity> out;
  for (std::size_t i = 0; i < words.size(); ++i)
    for (std::size_t j = i + 1; j < words.size(); ++j) {
      const double word = cosine(vectors[i].data(), vectors[j].data(), embeddings.dim());
      for (std::size_t k = 0; k < encoders.size(); ++k) {
        PairSimilarity r;
        r.a = words[i];
        r.b = words[j];
        r.encoding = encodings[k];
        r.scale = factor;
        r.wordSimilarity = word;
        r.positionalSimilarity = encoders[k].similarity(words[i].position, words[j].position);
        r.combinedSimilarity = combinedSimilarity(vectors[i], words[i].position, vectors[j],
                                                  words[j].position, encoders[k], factor);
        out.push_back(r);
      }
    }
  return out;
}

std::vector<double> sameTokenAcrossPositions(const Eigen::RowVectorXf& e,
                                             const PositionalEncoder& encoder, double scale,
                                             std::size_t maxPosition) {
  checkDim(e, encoder, "the word vector");
  const Eigen::RowVectorXd base = toDouble(e) * scale;
  const Eigen::RowVectorXd x0 = base + encoder.row(0);
  std::vector<double> out(maxPosition + 1);
  out[0] = 1.0;
  for (std::size_t k = 1; k <= maxPosition; ++k)
    out[k] = cosineD(x0, base + encoder.row(static_cast<std::int64_t>(k)));
  return out;
}

std::vector<double> distanceProfile(const PositionalEncoder& encoder, std::int64_t p,
                                    std::size_t len) {
  std::vector<double> out(len);
  const Eigen::RowVectorXd ref = encoder.row(p);
  for (std::size_t q = 0; q < len; ++q)
    out[q] = cosineD(ref, encoder.row(static_cast<std::int64_t>(q)));
  return out;
}

std::vector<double> combinedVsDistance(const Eigen::RowVectorXf& a, const Eigen::RowVectorXf& b,
                                       std::int64_t p, std::size_t maxDistance,
                                       const PositionalEncoder& encoder, double scale) {
  checkDim(a, encoder, "the first vector");
  checkDim(b, encoder, "the second vector");
  const Eigen::RowVectorXd x = toDouble(a) * scale + encoder.row(p);
  const Eigen::RowVectorXd bs = toDouble(b) * scale;
  std::vector<double> out(maxDistance + 1);
  for (std::size_t k = 0; k <= maxDistance; ++k)
    out[k] = cosineD(x, bs + encoder.row(p + static_cast<std::int64_t>(k)));
  return out;
}

BinaryCounting binaryCounting(std::size_t positions, std::size_t bits, int samplesPerPosition) {
  if (bits == 0 || bits > 30 || positions == 0 || samplesPerPosition < 1)
    throw ConfigError("binary counting needs 1..30 bits, positions > 0 and samples >= 1");
  BinaryCounting c;
  c.samplesPerPosition = samplesPerPosition;
  c.bits = MatrixD::Zero(static_cast<Eigen::Index>(positions), static_cast<Eigen::Index>(bits));
  const auto rows =
      static_cast<Eigen::Index>(positions * static_cast<std::size_t>(samplesPerPosition) + 1);
  c.waves = MatrixD::Zero(rows, static_cast<Eigen::Index>(bits));
  for (std::size_t k = 0; k < bits; ++k) {
    for (std::size_t p = 0; p < positions; ++p)
      c.bits(static_cast<Eigen::Index>(p), static_cast<Eigen::Index>(k)) =
          static_cast<double>((p >> k) & 1u);
    const double half = std::ldexp(1.0, static_cast<int>(k));  // 2^k: half the period
    for (Eigen::Index r = 0; r < rows; ++r) {
      const double x = static_cast<double>(r) / samplesPerPosition;
      c.waves(r, static_cast<Eigen::Index>(k)) =
          0.5 - 0.5 * std::cos(std::numbers::pi * (x - half / 2) / half);
    }
  }
  return c;
}

Decomposition decompose(const Eigen::RowVectorXf& a, std::int64_t pa, const Eigen::RowVectorXf& b,
                        std::int64_t pb, const PositionalEncoder& encoder, SweepScale sweepScale) {
  const double scale = sweepScale.factor(encoder.options().dim);
  checkDim(a, encoder, "the first vector");
  checkDim(b, encoder, "the second vector");
  const Eigen::RowVectorXd ea = toDouble(a) * scale, eb = toDouble(b) * scale;
  const Eigen::RowVectorXd pea = encoder.row(pa), peb = encoder.row(pb);
  Decomposition d;
  d.dim = encoder.options().dim;
  d.encoding = encoder.options().encoding;
  d.scale = sweepScale;
  d.factor = scale;
  d.wordSimilarity = cosine(a.data(), b.data(), static_cast<std::size_t>(a.size()));
  d.positionalSimilarity = cosineD(pea, peb);
  d.combinedSimilarity = cosineD(ea + pea, eb + peb);
  const double words = ea.dot(eb), cross = ea.dot(peb) + pea.dot(eb), positions = pea.dot(peb);
  const double total = words + cross + positions;
  if (total != 0) {
    d.wordShare = words / total;
    d.crossShare = cross / total;
    d.positionalShare = positions / total;
  }
  d.normRatio = 0.5 * (ea.norm() / pea.norm() + eb.norm() / peb.norm());
  return d;
}

std::vector<SweepScale> experimentScales() { return {{1, false}, {1, true}, {2, true}}; }

std::vector<SweepScale> decompositionScales() {
  return {{0, false}, {1, false}, {1, true}, {2, true}};
}

PositionalExperiments positionalExperiments(const Embeddings& embeddings,
                                            const ExperimentOptions& options,
                                            const std::vector<const Embeddings*>& extraDims) {
  if (options.encodings.empty())
    throw ConfigError("the positional experiments need at least one encoding");
  for (const Embeddings* e : extraDims)
    for (const WordAt* w : {&options.first, &options.second})
      if (!e->find(w->word))
        throw InputError("the word '" + w->word + "' is not in the vocabulary of the " +
                         std::to_string(e->dim()) + "-d vectors");
  for (const WordAt* w : {&options.first, &options.second})
    if (!embeddings.find(w->word))
      throw InputError("the word '" + w->word + "' is not in the vocabulary (" +
                       std::to_string(embeddings.size()) + " words)");
  PositionalExperiments r;
  const std::size_t d = embeddings.dim();
  auto encoderFor = [&](Encoding e, std::size_t dim) {
    PositionalOptions o;
    o.dim = dim;
    o.base = options.base;
    o.encoding = e;
    return PositionalEncoder(o);
  };
  std::vector<PositionalEncoder> encoders;
  for (Encoding e : options.encodings) encoders.push_back(encoderFor(e, d));
  const WordAt& first = options.first;
  const Eigen::RowVectorXf ea = embeddings.vector(first.word),
                           eb = embeddings.vector(options.second.word);

  r.sameTokenWord = first.word;
  for (const auto& enc : encoders)
    for (const SweepScale& s : experimentScales())
      r.sameToken.push_back(
          {enc.options().encoding, s,
           sameTokenAcrossPositions(ea, enc, s.factor(d), options.sameTokenPositions)});

  r.profilePosition = options.profilePosition;
  for (const auto& enc : encoders)
    r.profiles.push_back({enc.options().encoding,
                          distanceProfile(enc, options.profilePosition, options.profileLength)});

  for (const auto& enc : encoders)
    for (const SweepScale& s : experimentScales())
      r.combinedByDistance.push_back(
          {enc.options().encoding, s,
           combinedVsDistance(ea, eb, first.position, options.maxDistance, enc, s.factor(d))});

  r.peInterleaved = encoderFor(Encoding::Interleaved, d).matrix(0, options.heatmapPositions);
  r.peBook = encoderFor(Encoding::Book, d).matrix(0, options.heatmapPositions);
  for (std::size_t c : {0u, 32u, 64u, 128u})
    if (c < d) r.columns.push_back(c);
  r.counting = binaryCounting(32, 5);

  std::vector<const Embeddings*> all = extraDims;
  all.push_back(&embeddings);
  std::sort(all.begin(), all.end(), [](auto* x, auto* y) { return x->dim() < y->dim(); });
  for (const Embeddings* e : all) {
    const Eigen::RowVectorXf a = e->vector(first.word), b = e->vector(options.second.word);
    for (Encoding enc : options.encodings) {
      const PositionalEncoder pe = encoderFor(enc, e->dim());
      for (const SweepScale& s : decompositionScales())
        r.decompositions.push_back(decompose(a, first.position, b, options.second.position, pe, s));
    }
  }
  return r;
}

}  // namespace posvec
