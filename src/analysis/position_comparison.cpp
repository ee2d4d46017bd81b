// Design note. The question of the study, "how similar are two positions k
// apart?", has one answer per method. For the paper's encoding it is the cosine
// of two PE rows; for rotary embeddings with frequencies θᵢ it is
// mean_cos(k) = (2/d)·Σ cos(k·θᵢ), which is at once the cosine of two sinusoidal
// rows with those frequencies and the rotary score of a constant query and key
// (so the paper's encoding and plain RoPE at the same d and base coincide: a check
// the report shows). Dynamic NTK and LongRoPE choose their frequencies by the
// sequence length, so distance k is measured with the frequencies of a sequence of
// k + 1 tokens. ALiBi has no vectors to compare: its measure is the factor its bias
// puts on an attention weight k positions away, exp(−m_h·k), averaged over heads.
// Past the training context, a pair of rotation dimensions is out of its trained
// range when its angle exceeds any it reached within the context; pairs that turned
// at least once in training have seen every angle.
#include "position_comparison.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "posvec/positional.hpp"
#include "posvec/rope.hpp"

namespace posvec {

namespace detail::positions {

struct Method {
  std::string name;
  bool rotary = true;
  RopeConfig config;  // rotary methods
};

// The frequencies a method uses for a sequence of `length` tokens.
RopeFrequencies frequenciesFor(const Method& m, std::int64_t length) {
  RopeConfig c = m.config;
  if (c.type == RopeType::Dynamic || c.type == RopeType::LongRope) c.seqLen = length;
  return ropeFrequencies(c);
}

double alibiMeasure(const std::vector<double>& slopes, double k) {
  double s = 0;
  for (double m : slopes) s += std::exp(-m * k);
  return s / static_cast<double>(slopes.size());
}

// cos(R_p a, R_q b) with pairs (2i, 2i + 1) of the first `dim` columns rotated.
double rotaryCosine(const Eigen::RowVectorXd& a, const Eigen::RowVectorXd& b, std::int64_t p,
                    std::int64_t q, const std::vector<double>& invFreq) {
  Eigen::RowVectorXd ra = a, rb = b;
  auto rotate = [&](Eigen::RowVectorXd& v, std::int64_t pos) {
    for (std::size_t i = 0; i < invFreq.size(); ++i) {
      const double ang = static_cast<double>(pos) * invFreq[i];
      const auto x = static_cast<Eigen::Index>(2 * i), y = x + 1;
      const double vx = v(x), vy = v(y);
      v(x) = vx * std::cos(ang) - vy * std::sin(ang);
      v(y) = vx * std::sin(ang) + vy * std::cos(ang);
    }
  };
  rotate(ra, p);
  rotate(rb, q);
  return ra.dot(rb) / (ra.norm() * rb.norm());
}

// A model at its own rotated size, theta and context (or its unscaled twin, `plain`):
// mean_cos out to 8 × max_position_embeddings, and the study pair's words rotated on
// their first columns.
ModelPositions modelPositions(const std::string& name, const RopeConfig& c, const RopeConfig& plain,
                              const Eigen::RowVectorXd& ea, const Eigen::RowVectorXd& eb,
                              const WordAt& wa, const WordAt& wb) {
  const Method m{name, true, c};
  ModelPositions r;
  r.name = name;
  r.rule = ropeTypeName(c.type);
  r.dim = c.rotaryDim();
  r.base = c.base;
  r.context = c.originalContext();
  r.maxPosition = c.maxPositionEmbeddings;
  const auto top = static_cast<double>(std::max(r.maxPosition, r.context));
  const double span = 8 * top;
  auto measure = [&](double k) {
    return ropeMeanCos(frequenciesFor(m, static_cast<std::int64_t>(k) + 1).invFreq, k);
  };
  const int steps = 160;
  for (int s = 0; s <= steps; ++s) {
    const double k = std::round(std::pow(span, static_cast<double>(s) / steps));
    if (r.farDistance.empty() || k > r.farDistance.back()) r.farDistance.push_back(k);
  }
  r.farDistance.push_back(static_cast<double>(r.context));
  r.farDistance.push_back(top);
  std::sort(r.farDistance.begin(), r.farDistance.end());
  r.farDistance.erase(std::unique(r.farDistance.begin(), r.farDistance.end()), r.farDistance.end());
  for (double k : r.farDistance) r.far.push_back(measure(k));
  r.pairPositional = measure(static_cast<double>(std::abs(wb.position - wa.position)));
  r.atContext = measure(static_cast<double>(r.context));
  r.atMax = measure(top);
  r.maxBeyond = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < r.farDistance.size(); ++i)
    if (r.farDistance[i] > top) r.maxBeyond = std::max(r.maxBeyond, r.far[i]);
  const RopeFrequencies far = frequenciesFor(m, static_cast<std::int64_t>(span));
  r.attentionFactor = far.attentionFactor;
  const auto pairLen = std::max(wa.position, wb.position) + 1;
  r.pairCombined =
      r.dim <= static_cast<std::size_t>(ea.size())
          ? rotaryCosine(ea, eb, wa.position, wb.position, frequenciesFor(m, pairLen).invFreq)
          : std::numeric_limits<double>::quiet_NaN();
  // At the context the model claims: the frequencies for a sequence that long.
  const std::vector<double> trained = ropeFrequencies(plain).invFreq;
  const std::vector<double> atTop = frequenciesFor(m, static_cast<std::int64_t>(top)).invFreq;
  const auto L = static_cast<double>(r.context);
  for (std::size_t i = 0; i < trained.size(); ++i) {
    const double reached = trained[i] * L;
    if (reached < 2 * std::numbers::pi && atTop[i] * top > reached * (1 + 1e-12)) ++r.unseenPairs;
  }
  return r;
}

}  // namespace detail::positions

PositionComparison comparePositions(const Embeddings& embeddings, const StudyOptions& o) {
  using namespace detail::positions;
  PositionComparison out;
  const std::size_t d = embeddings.dim();
  out.context = o.compareContext;
  out.factor = o.compareFactor;
  out.dim = d;
  out.base = o.base;
  out.alibiHeads = o.alibiHeads;
  const WordAt& wa = o.pairs[0];
  const WordAt& wb = o.pairs[1];
  out.pairDistance = std::abs(wb.position - wa.position);
  const double L = static_cast<double>(o.compareContext);
  const double span = 8 * L;

  RopeConfig plain;
  plain.headDim = d;
  plain.base = o.base;
  plain.maxPositionEmbeddings = o.compareContext;
  std::vector<Method> methods;
  methods.push_back({"paper", false, plain});
  methods.push_back({"rope", true, plain});
  for (RopeType t : {RopeType::Linear, RopeType::Ntk, RopeType::Dynamic, RopeType::Yarn,
                     RopeType::Llama3, RopeType::LongRope}) {
    RopeConfig c = plain;
    c.type = t;
    c.factor = o.compareFactor;
    if (t == RopeType::Yarn || t == RopeType::Llama3 || t == RopeType::LongRope) {
      c.originalMaxPositionEmbeddings = o.compareContext;
      c.maxPositionEmbeddings = static_cast<std::int64_t>(std::llround(L * o.compareFactor));
    }
    if (t == RopeType::LongRope) {
      // LongRoPE searches its factors per model; an illustration: short factors 1,
      // long factors rising linearly from 1 (fastest pair) to the factor (slowest).
      const std::size_t n = d / 2;
      c.shortFactor.assign(n, 1.0);
      for (std::size_t i = 0; i < n; ++i)
        c.longFactor.push_back(1 + (o.compareFactor - 1) * static_cast<double>(i) /
                                       static_cast<double>(std::max<std::size_t>(n - 1, 1)));
    }
    methods.push_back({ropeTypeName(t), true, c});
  }
  methods.push_back({"alibi", false, plain});

  std::vector<double> nearK, farK;
  for (std::size_t k = 0; k <= out.nearMax; ++k) nearK.push_back(static_cast<double>(k));
  const int steps = 160;
  for (int s = 0; s <= steps; ++s) {
    const double k = std::round(std::pow(span, static_cast<double>(s) / steps));
    if (farK.empty() || k > farK.back()) farK.push_back(k);
  }
  // The context itself, so the value there is on the curve.
  farK.push_back(L);
  std::sort(farK.begin(), farK.end());
  farK.erase(std::unique(farK.begin(), farK.end()), farK.end());

  PositionalOptions po;
  po.dim = d;
  po.base = o.base;
  po.encoding = Encoding::Interleaved;
  const PositionalEncoder encoder(po);
  const std::vector<double> slopes = alibiSlopes(o.alibiHeads);
  const auto ea = embeddings.vectors().row(*embeddings.find(wa.word)).cast<double>().eval();
  const auto eb = embeddings.vectors().row(*embeddings.find(wb.word)).cast<double>().eval();
  const double scale = o.scale.factor(d);
  const std::vector<double> trained = ropeFrequencies(plain).invFreq;

  for (const Method& m : methods) {
    PositionMethod r;
    r.name = m.name;
    auto measure = [&](double k) {
      if (m.name == "paper") return encoder.similarity(0, static_cast<std::int64_t>(k));
      if (m.name == "alibi") return alibiMeasure(slopes, k);
      const auto f = frequenciesFor(m, static_cast<std::int64_t>(k) + 1);
      return ropeMeanCos(f.invFreq, k);
    };
    r.measure = m.name == "paper"   ? "cosine of PE rows"
                : m.name == "alibi" ? "mean over heads of exp(-m_h k)"
                                    : "mean_cos(k) = (2/d) sum cos(k theta_i)";
    r.nearDistance = nearK;
    r.farDistance = farK;
    for (double k : nearK) r.near.push_back(measure(k));
    for (double k : farK) r.far.push_back(measure(k));
    r.pairPositional = measure(static_cast<double>(out.pairDistance));
    r.atContext = measure(L);
    r.maxBeyond = -std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < farK.size(); ++i)
      if (farK[i] > L) r.maxBeyond = std::max(r.maxBeyond, r.far[i]);
    if (m.name == "alibi") {
      r.pairCombined = std::numeric_limits<double>::quiet_NaN();
      r.unseenPairs = -1;
    } else if (m.name == "paper") {
      const Eigen::RowVectorXd x = ea * scale + encoder.row(wa.position);
      const Eigen::RowVectorXd y = eb * scale + encoder.row(wb.position);
      r.pairCombined = x.dot(y) / (x.norm() * y.norm());
    } else {
      const auto pairLen = std::max(wa.position, wb.position) + 1;
      r.pairCombined =
          rotaryCosine(ea, eb, wa.position, wb.position, frequenciesFor(m, pairLen).invFreq);
      r.attentionFactor = frequenciesFor(m, static_cast<std::int64_t>(span)).attentionFactor;
    }
    if (m.name != "alibi") {
      const std::vector<double> at =
          m.name == "paper" ? trained : frequenciesFor(m, static_cast<std::int64_t>(span)).invFreq;
      std::int64_t unseen = 0;
      for (std::size_t i = 0; i < at.size(); ++i) {
        const double reached = trained[i] * L;
        // A pair that turned at least once within the context has seen every angle.
        if (reached < 2 * std::numbers::pi && at[i] * span > reached * (1 + 1e-12)) ++unseen;
      }
      r.unseenPairs = unseen;
    }
    out.methods.push_back(std::move(r));
  }
  for (const ComparedModel& cm : o.compareModels) {
    RopeConfig unscaled = cm.config;
    unscaled.type = RopeType::Default;
    unscaled.attentionFactor.reset();
    out.models.push_back(modelPositions(cm.name, cm.config, unscaled, ea, eb, wa, wb));
    out.models.push_back(modelPositions(cm.name + " unscaled", unscaled, unscaled, ea, eb, wa, wb));
  }
  return out;
}

}  // namespace posvec
