#include "posvec/analysis.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
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

std::string scaleLabel(double factor, std::size_t dim) {
  const double root = std::sqrt(static_cast<double>(dim));
  if (factor == 0) return "0";
  if (factor == 1) return "1";
  if (std::abs(factor - root) < 1e-12 * root) return "sqrt(d)";
  if (std::abs(factor - 2 * root) < 1e-12 * root) return "2 sqrt(d)";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", factor);
  return buf;
}

}  // namespace

const std::vector<std::string>& studySentenceWords() {
  static const std::vector<std::string> words = {"the",   "black", "cat", "sat",   "on",  "the",
                                                 "couch", "and",   "the", "brown", "dog", "slept",
                                                 "on",    "the",   "rug", "."};
  return words;
}

WordAt parseWordAt(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos)
    throw ConfigError("--pair '" + text + "' has no colon: write WORD:POSITION, e.g. black:2");
  WordAt w;
  w.word = text.substr(0, colon);
  const std::string pos = text.substr(colon + 1);
  if (w.word.empty())
    throw ConfigError("--pair '" + text + "' has an empty word: write WORD:POSITION");
  if (pos.empty() || pos.size() > 12 ||
      !std::all_of(pos.begin(), pos.end(), [](char c) { return c >= '0' && c <= '9'; }))
    throw ConfigError("--pair '" + text + "': position '" + pos +
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
  if (words.size() < 2) throw ConfigError("the study needs at least two --pair WORD:POSITION");
  std::vector<Eigen::RowVectorXf> vectors;
  for (const auto& w : words) {
    if (!embeddings.find(w.word))
      throw InputError("--pair '" + toString(w) + "': the word '" + w.word +
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
        r.word = word;
        r.positional = encoders[k].similarity(words[i].position, words[j].position);
        r.combined = combinedSimilarity(vectors[i], words[i].position, vectors[j],
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
                        std::int64_t pb, const PositionalEncoder& encoder,
                        const std::string& scaleName, double scale) {
  checkDim(a, encoder, "the first vector");
  checkDim(b, encoder, "the second vector");
  const Eigen::RowVectorXd ea = toDouble(a) * scale, eb = toDouble(b) * scale;
  const Eigen::RowVectorXd pea = encoder.row(pa), peb = encoder.row(pb);
  Decomposition d;
  d.dim = encoder.options().dim;
  d.encoding = encoder.options().encoding;
  d.scaleName = scaleName;
  d.scale = scale;
  d.word = cosine(a.data(), b.data(), static_cast<std::size_t>(a.size()));
  d.positional = cosineD(pea, peb);
  d.combined = cosineD(ea + pea, eb + peb);
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

std::vector<std::pair<std::string, double>> decompositionScales(std::size_t dim) {
  const double root = std::sqrt(static_cast<double>(dim));
  return {{"0", 0.0}, {"1", 1.0}, {"sqrt(d)", root}, {"2 sqrt(d)", 2 * root}};
}

std::vector<TrainingPoint> trainingSweep(const std::vector<Sentence>& sentences,
                                         const TrainConfig& config, const WordAt& a,
                                         const WordAt& b, const std::vector<int>& epochs,
                                         const std::vector<double>& fractions) {
  std::vector<TrainingPoint> out;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (double fraction : fractions) {
    if (!(fraction > 0 && fraction <= 1))
      throw ConfigError("training sweep: corpus fraction " + std::to_string(fraction) +
                        " is not in (0, 1]");
    const auto n = std::max<std::size_t>(
        1,
        static_cast<std::size_t>(std::llround(fraction * static_cast<double>(sentences.size()))));
    std::vector<Sentence> part(
        sentences.begin(),
        sentences.begin() + static_cast<std::ptrdiff_t>(std::min(n, sentences.size())));
    std::int64_t tokens = 0;
    for (const auto& s : part) tokens += static_cast<std::int64_t>(s.size());
    const CorpusSource source = CorpusSource::fromSentences(part);
    for (int e : epochs) {
      TrainConfig c = config;
      c.epochs = e;
      TrainingPoint t;
      t.epochs = e;
      t.fraction = fraction;
      t.sentences = part.size();
      t.tokens = tokens;
      t.word = t.combinedBook = t.combinedInterleaved = nan;
      const Embeddings emb = embeddingsOf(train(source, c));
      if (emb.find(a.word) && emb.find(b.word)) {
        const auto ea = emb.vector(a.word), eb = emb.vector(b.word);
        t.word = cosine(ea.data(), eb.data(), emb.dim());
        const double s = std::sqrt(static_cast<double>(emb.dim()));
        PositionalOptions o;
        o.dim = emb.dim();
        o.encoding = Encoding::Book;
        t.combinedBook =
            combinedSimilarity(ea, a.position, eb, b.position, PositionalEncoder(o), s);
        o.encoding = Encoding::Interleaved;
        t.combinedInterleaved =
            combinedSimilarity(ea, a.position, eb, b.position, PositionalEncoder(o), s);
      }
      out.push_back(t);
    }
  }
  return out;
}

StudyResults runExperiments(const Embeddings& embeddings, const ExperimentOptions& options,
                            const std::vector<const Embeddings*>& extraDims) {
  StudyResults r;
  const std::size_t d = embeddings.dim();
  r.settings.dim = d;
  r.settings.base = options.base;
  r.settings.scale = options.scale.factor(d);
  r.settings.scaleName = scaleLabel(r.settings.scale, d);
  r.settings.vocabulary = embeddings.size();
  r.words = options.words;
  r.pairs =
      studySimilarities(embeddings, options.words, options.encodings, options.scale, options.base);

  auto encoderFor = [&](Encoding e, std::size_t dim) {
    PositionalOptions o;
    o.dim = dim;
    o.base = options.base;
    o.encoding = e;
    return PositionalEncoder(o);
  };
  const PositionalEncoder book = encoderFor(Encoding::Book, d);
  const PositionalEncoder inter = encoderFor(Encoding::Interleaved, d);
  const std::vector<std::pair<std::string, const PositionalEncoder*>> both = {
      {"book", &book}, {"interleaved", &inter}};
  const WordAt& first = options.words[0];
  const WordAt& second = options.words[1];
  const Eigen::RowVectorXf ea = embeddings.vector(first.word), eb = embeddings.vector(second.word);
  const double root = std::sqrt(static_cast<double>(d));
  const std::vector<std::pair<std::string, double>> scales = {
      {"1", 1.0}, {"sqrt(d)", root}, {"2 sqrt(d)", 2 * root}};

  r.sameTokenWord = first.word;
  for (const auto& [name, enc] : both)
    for (const auto& [sname, s] : scales)
      r.sameToken.push_back({name + ", scale " + sname,
                             sameTokenAcrossPositions(ea, *enc, s, options.sameTokenPositions)});

  r.profilePosition = options.profilePosition;
  for (const auto& [name, enc] : both)
    r.profiles.push_back(
        {name, distanceProfile(*enc, options.profilePosition, options.profileLength)});

  for (const auto& [name, enc] : both)
    for (const auto& [sname, s] : scales)
      r.combinedByDistance.push_back(
          {name + ", scale " + sname,
           combinedVsDistance(ea, eb, first.position, options.maxDistance, *enc, s)});

  r.peInterleaved = inter.matrix(0, options.heatmapPositions);
  r.peBook = book.matrix(0, options.heatmapPositions);
  for (std::size_t c : {0u, 32u, 64u, 128u})
    if (c < d) r.columns.push_back(c);
  r.counting = binaryCounting(32, 5);

  std::vector<const Embeddings*> all = extraDims;
  all.push_back(&embeddings);
  std::sort(all.begin(), all.end(), [](auto* x, auto* y) { return x->dim() < y->dim(); });
  for (const Embeddings* e : all) {
    const Eigen::RowVectorXf a = e->vector(first.word), b = e->vector(second.word);
    for (Encoding enc : {Encoding::Book, Encoding::Interleaved}) {
      const PositionalEncoder pe = encoderFor(enc, e->dim());
      for (const auto& [sname, s] : decompositionScales(e->dim()))
        r.decompositions.push_back(decompose(a, first.position, b, second.position, pe, sname, s));
    }
  }
  return r;
}

}  // namespace posvec
