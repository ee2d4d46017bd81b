// The report's figures: one SVG document per figure of a StudyResults, in page
// order, with one element-id sequence per page (see svg::DocumentIds).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "posvec/error.hpp"
#include "posvec/report.hpp"
#include "report_detail.hpp"
#include "svg.hpp"

namespace posvec {

namespace {

namespace svg = detail::svg;
using namespace detail::report;

std::vector<double> iota(std::size_t n, double start = 0) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = start + static_cast<double>(i);
  return v;
}

// The base as the captions write it: 10000, 500, 1e+06.
std::string baseText(double base) {
  char buf[32];
  if (base == std::floor(base) && base < 1e9)
    std::snprintf(buf, sizeof buf, "%.0f", base);
  else
    std::snprintf(buf, sizeof buf, "%g", base);
  return buf;
}

// Line styles by the encoding's place in the requested list (the first solid),
// and the words the captions use for them.
struct DashStyle {
  const char* dash;
  const char* name;
};
constexpr DashStyle kDashes[] = {
    {"", "solid"}, {"7 4", "dashed"}, {"2 3", "dotted"}, {"9 3 2 3", "dash-dotted"}};

DashStyle dashOf(const std::vector<Encoding>& encodings, Encoding e) {
  const auto at = static_cast<std::size_t>(std::find(encodings.begin(), encodings.end(), e) -
                                           encodings.begin());
  return kDashes[std::min(at, std::size(kDashes) - 1)];
}

// "Solid: book, dashed: interleaved." (`first` follows the first encoding's name).
std::string dashLegend(const std::vector<Encoding>& encodings, const std::string& first = "") {
  std::string out;
  for (std::size_t i = 0; i < encodings.size(); ++i) {
    std::string style = dashOf(encodings, encodings[i]).name;
    if (i == 0) style[0] = static_cast<char>(style[0] - 'a' + 'A');
    out += (i ? ", " : "") + style + ": " + encodingName(encodings[i]) + (i == 0 ? first : "");
  }
  return out + ".";
}

// Colour by scale (1, √d, 2√d), dash by encoding.
void styleCurve(svg::Series& s, const std::vector<Encoding>& encodings, const ScaledCurve& curve) {
  s.dash = dashOf(encodings, curve.encoding).dash;
  std::size_t colour = 0;
  if (curve.scale.ofRootDim) colour = curve.scale.multiple == 1 ? 1 : 2;
  s.colour = svg::paletteColour(colour);
}

Figure similaritiesFigure(const StudyResults& r) {
  svg::BarChart c;
  c.title = "Word, positional and combined cosine similarity";
  c.yLabel = "cosine similarity";
  c.seriesLabels = {"word", "positional", "combined"};
  double lo = 0;
  for (const auto& p : r.pairs) {
    if (c.groups.size() == 8) break;
    const std::string label = (r.words.size() > 2 ? pairName(p) + " " : std::string("posvec, ")) +
                              encodingName(p.encoding);
    c.groups.push_back({label, {p.wordSimilarity, p.positionalSimilarity, p.combinedSimilarity}});
    lo = std::min({lo, p.wordSimilarity, p.positionalSimilarity, p.combinedSimilarity});
  }
  const auto& first = r.pairs.front();
  if (r.words.size() == 2 && first.a.word == "black" && first.a.position == 2 &&
      first.b.word == "brown" && first.b.position == 10)
    c.groups.push_back({"the study (published), book",
                        {kPublishedWord, kPublishedPositional, kPublishedCombined}});
  c.yMin = lo < 0 ? -1 : 0;
  c.yMax = 1.08;
  c.valueDecimals = 4;
  c.height = 360;
  std::string caption = "The three numbers of the study for ";
  caption += r.words.size() > 2 ? "each pair (first eight shown)" : pairName(r.pairs.front());
  caption += " with " + std::to_string(r.settings.dim) + "-d vectors, embeddings scaled by " +
             pretty(r.settings.scaleName) + ". Only the positional term depends on the encoding.";
  return {"study-similarities.svg", "The study", caption, svg::render(c)};
}

// A chart of one curve per (encoding, scale) setting over 0, 1, 2, ..., legend on the right.
svg::LineChart settingCurvesChart(std::string title, std::string xLabel, std::string yLabel,
                                  const std::vector<ScaledCurve>& curves,
                                  const std::vector<Encoding>& encodings) {
  svg::LineChart c;
  c.title = std::move(title);
  c.xLabel = std::move(xLabel);
  c.yLabel = std::move(yLabel);
  c.legend = svg::LineChart::LegendPlace::Right;
  c.width = 820;
  for (const auto& curve : curves) {
    svg::Series s;
    s.label = pretty(curveLabel(curve));
    s.x = iota(curve.values.size());
    s.y = curve.values;
    styleCurve(s, encodings, curve);
    c.series.push_back(s);
  }
  return c;
}

Figure sameTokenFigure(const StudyResults& r, svg::DocumentIds& ids) {
  const svg::LineChart c = settingCurvesChart(
      "The same word at different positions: '" + r.experiments.sameTokenWord + "'", "position k",
      "cos(x\u2080, x\u2096),  x\u2096 = e\u00B7scale + PE[k]", r.experiments.sameToken,
      r.encodings);
  return {"same-token.svg", "Same word, different positions",
          "How similar one token's transformer input stays to itself at position 0 as it moves "
          "to position k. A larger embedding scale keeps the word's identity (cosine near 1); "
          "with scale 1 the positional encoding dominates. " +
              dashLegend(r.encodings, " encoding"),
          svg::render(c, ids)};
}

Figure profileFigure(const StudyResults& r, svg::DocumentIds& ids) {
  const auto& x = r.experiments;
  svg::LineChart c;
  c.title = "Similarity versus distance: cos(PE[" + std::to_string(x.profilePosition) + "], PE[q])";
  c.xLabel = "position q";
  c.yLabel = "cosine similarity";
  c.legend = svg::LineChart::LegendPlace::TopRight;
  c.hLines = {0};
  for (std::size_t i = 0; i < x.profiles.size(); ++i) {
    svg::Series s;
    s.label = encodingName(x.profiles[i].encoding);
    s.x = iota(x.profiles[i].values.size());
    s.y = x.profiles[i].values;
    s.width = 1.4;
    s.colour = svg::paletteColour(i == 0 ? 1 : i == 1 ? 0 : i);
    c.series.push_back(s);
  }
  c.notes.push_back({static_cast<double>(x.profilePosition), 1.0,
                     "q = p = " + std::to_string(x.profilePosition)});
  double lo = 0;
  for (const auto& p : x.profiles)
    for (double v : p.values) lo = std::min(lo, v);
  c.yMin = lo < 0 ? -1 : 0;
  c.yMax = 1.12;
  for (double v = c.yMin; v <= 1.0 + 1e-9; v += 0.2)
    c.yTicks.push_back({v, svg::formatTick(std::round(v * 10) / 10)});
  return {"distance-profile.svg", "Similarity versus distance",
          "Cosine of the encoding of position " + std::to_string(x.profilePosition) +
              " with every other position. It peaks at q = p and falls off with |p \u2212 q|; "
              "the interleaved profile is symmetric around p. The book encoding's frequencies fall "
              "twice as fast, so most of its columns are nearly constant and every position looks "
              "alike (high floor).",
          svg::render(c, ids)};
}

Figure heatmapFigure(const MatrixD& m, const std::string& name, const std::string& file,
                     svg::DocumentIds& ids) {
  svg::Heatmap h;
  h.title = "Positional encoding matrix (" + name + "), " + std::to_string(m.rows()) +
            " positions \u00D7 " + std::to_string(m.cols()) + " dimensions";
  h.xLabel = "dimension (column)";
  h.yLabel = "position";
  h.colourLabel = "PE value";
  h.values = m;
  for (double v : svg::niceTicks(0, static_cast<double>(m.cols() - 1), 8))
    h.xTicks.push_back({v, svg::formatTick(v)});
  for (double v : svg::niceTicks(0, static_cast<double>(m.rows() - 1), 6))
    h.yTicks.push_back({v, svg::formatTick(v)});
  std::string caption =
      "Each row is the vector added to the word at that position. Left columns "
      "oscillate fast, right columns slowly; ";
  caption += name == "book" ? "with the book formula the slow region starts much earlier, so most "
                              "columns hold sin \u2248 0 and cos \u2248 1 for every position."
                            : "sine and cosine columns alternate (interleaved layout).";
  return {file, "PE matrix (" + name + ")", caption, svg::render(h, ids)};
}

Figure columnsFigure(const StudyResults& r, svg::DocumentIds& ids) {
  const MatrixD& pe = r.experiments.peInterleaved;
  const std::vector<std::size_t>& columns = r.experiments.columns;
  svg::LineChart c;
  c.title = "Columns of PE (interleaved) as sinusoids, with the sentence's words";
  c.xLabel = "position";
  c.yLabel = "PE value";
  c.legend = svg::LineChart::LegendPlace::Right;
  c.width = 840;
  c.height = 420;
  const auto& words = studySentenceWords();
  const std::size_t n =
      std::min<std::size_t>(static_cast<std::size_t>(pe.rows()), words.size() + 4);
  for (std::size_t i = 0; i < columns.size(); ++i) {
    // Sampled at integer positions; the dots are where words sit.
    svg::Series s;
    s.label = "column " + std::to_string(columns[i]);
    s.x = iota(n);
    for (std::size_t p = 0; p < n; ++p)
      s.y.push_back(pe(static_cast<Eigen::Index>(p), static_cast<Eigen::Index>(columns[i])));
    s.markers = true;
    s.colour = svg::paletteColour(i);
    c.series.push_back(s);
  }
  for (std::size_t p = 0; p < words.size(); ++p) {
    svg::Marker m;
    m.x = static_cast<double>(p + 1);
    m.label = words[p];
    bool chosen = false;
    for (const auto& w : r.words)
      chosen = chosen || (w.position == static_cast<std::int64_t>(p + 1) && w.word == words[p]);
    if (chosen) m.colour = "#b00020";
    c.markers.push_back(m);
  }
  c.yMin = -1.1;
  c.yMax = 1.1;
  c.xMin = 0;
  c.xMax = static_cast<double>(n - 1);
  for (std::size_t p = 0; p < n; p += 2)
    c.xTicks.push_back({static_cast<double>(p), std::to_string(p)});
  c.hLines = {0};
  return {"pe-columns.svg", "Columns as sinusoids",
          "Selected columns of the interleaved encoding over positions 0\u2013" +
              std::to_string(n - 1) + ", with the words of \u201C" + kStudySentence +
              "\u201D at their positions (the study's pair in red). Column 2k is sin(p / " +
              baseText(r.settings.base) +
              "^(2k/d)): "
              "each column is a clock with its own period.",
          svg::render(c, ids)};
}

Figure countingFigure(const StudyResults& r, svg::DocumentIds& ids) {
  const auto& b = r.experiments.counting;
  svg::LineChart c;
  c.title = "Binary counting: bits flip with periods 2, 4, 8, 16, 32; sinusoids do it smoothly";
  c.xLabel = "position";
  c.legend = svg::LineChart::LegendPlace::None;
  c.width = 820;
  c.height = 440;
  c.yGrid = false;
  const auto positions = static_cast<std::size_t>(b.bits.rows());
  for (Eigen::Index k = 0; k < b.bits.cols(); ++k) {
    const double lane = 1.4 * static_cast<double>(k);
    svg::Series step;
    step.x = iota(positions);
    for (std::size_t p = 0; p < positions; ++p)
      step.y.push_back(lane + b.bits(static_cast<Eigen::Index>(p), k));
    step.step = true;
    step.colour = "#333333";
    step.width = 1.6;
    svg::Series wave;
    for (Eigen::Index row = 0; row < b.waves.rows(); ++row) {
      wave.x.push_back(static_cast<double>(row) / b.samplesPerPosition);
      wave.y.push_back(lane + b.waves(row, k));
    }
    wave.colour = svg::paletteColour(static_cast<std::size_t>(k));
    wave.width = 2.2;
    c.series.push_back(wave);
    c.series.push_back(step);
    c.yTicks.push_back(
        {lane + 0.5, "bit " + std::to_string(k) + " (period " + std::to_string(2 << k) + ")"});
  }
  c.series.front().label = "smooth wave";
  c.series[1].label = "bit";
  c.legend = svg::LineChart::LegendPlace::None;
  c.xMin = 0;
  c.xMax = static_cast<double>(positions);
  c.yMin = -0.3;
  c.yMax = 1.4 * static_cast<double>(b.bits.cols()) - 0.1;
  for (double v = 0; v <= c.xMax; v += 4) c.xTicks.push_back({v, svg::formatTick(v)});
  c.leftMargin = 150;
  return {"binary-counting.svg", "Binary counting",
          "Black steps: bit k of the position, which flips every 2^k positions. Coloured: a "
          "sinusoid with the same period. A positional encoding uses such waves at geometric "
          "frequencies (" +
              baseText(r.settings.base) +
              "^(\u22122k/d)), continuous so that nearby positions get nearby vectors.",
          svg::render(c, ids)};
}

Figure distanceFigure(const StudyResults& r, svg::DocumentIds& ids) {
  const std::string a = r.words[0].word, b = r.words[1].word;
  const svg::LineChart c = settingCurvesChart(
      "Combined similarity of '" + a + "' at " + std::to_string(r.words[0].position) + " and '" +
          b + "' k positions later",
      "distance k", "combined cosine similarity", r.experiments.combinedByDistance, r.encodings);
  return {
      "combined-vs-distance.svg", "Combined similarity versus distance",
      "The study's combined similarity as the second word moves away from the first. Scaling the "
      "embeddings by \u221Ad keeps the word similarity in charge; with scale 1 the positions take "
      "over. " +
          dashLegend(r.encodings),
      svg::render(c, ids)};
}

// Index of `value` in `list`, appending it first if it is new (first-seen order).
template <typename T>
std::size_t indexOf(std::vector<T>& list, const T& value) {
  auto it = std::find(list.begin(), list.end(), value);
  if (it == list.end()) it = list.insert(list.end(), value);
  return static_cast<std::size_t>(it - list.begin());
}

Figure decompositionFigure(const StudyResults& r, svg::DocumentIds& ids) {
  svg::LineChart c;
  c.title = "Combined similarity as the embedding scale and d_model vary";
  c.xLabel = "embedding scale";
  c.yLabel = "combined cosine similarity";
  c.legend = svg::LineChart::LegendPlace::Right;
  c.width = 820;
  const auto& decompositions = r.experiments.decompositions;
  std::vector<SweepScale> scales;
  std::vector<std::pair<std::size_t, Encoding>> keys;
  for (const auto& d : decompositions) {
    indexOf(scales, d.scale);
    indexOf(keys, std::pair<std::size_t, Encoding>{d.dim, d.encoding});
  }
  for (std::size_t i = 0; i < scales.size(); ++i)
    c.xTicks.push_back({static_cast<double>(i), pretty(scales[i].name())});
  std::vector<std::size_t> dims;
  for (const auto& k : keys) indexOf(dims, k.first);
  for (const auto& [dim, enc] : keys) {
    svg::Series s;
    s.label = "d=" + std::to_string(dim) + ", " + encodingName(enc);
    for (const auto& d : decompositions)
      if (d.dim == dim && d.encoding == enc) {
        s.x.push_back(static_cast<double>(indexOf(scales, d.scale)));
        s.y.push_back(d.combinedSimilarity);
      }
    s.colour = svg::paletteColour(indexOf(dims, dim));
    s.dash = dashOf(r.encodings, enc).dash;
    s.markers = true;
    c.series.push_back(s);
  }
  c.xMin = -0.2;
  c.xMax = static_cast<double>(scales.size()) - 0.8;
  return {"decomposition.svg", "Words versus positions",
          "Scale 0 leaves the positional similarity alone; as the scale grows the word vectors "
          "take over "
          "and the combined similarity moves towards the word similarity. The table below splits "
          "the dot "
          "product into its word, cross and position terms, and gives the norm ratio "
          "\u2016e\u00B7s\u2016 / \u2016PE\u2016 "
          "that explains it. " +
              dashLegend(r.encodings),
          svg::render(c, ids)};
}

// "10%, 30% or all": the corpus fractions of the training sweep.
std::string fractionsText(const std::vector<double>& fractions) {
  std::string out;
  for (std::size_t i = 0; i < fractions.size(); ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g%%", fractions[i] * 100);
    out += (i == 0                      ? ""
            : i + 1 == fractions.size() ? " or "
                                        : ", ") +
           (fractions[i] == 1 ? std::string("all") : std::string(buf));
  }
  return out;
}

Figure trainingFigure(const StudyResults& r, svg::DocumentIds& ids) {
  svg::LineChart c;
  c.title = "How the study's numbers move with training";
  c.xLabel = "epochs";
  c.yLabel = "cosine similarity";
  c.legend = svg::LineChart::LegendPlace::Right;
  c.width = 840;
  std::vector<double> fractions;
  std::vector<int> epochs;
  for (const auto& t : r.training) {
    indexOf(fractions, t.fraction);
    indexOf(epochs, t.epochs);
  }
  std::sort(epochs.begin(), epochs.end());
  // Epochs on a log2 axis: 1, 2, 5, 10, 20... read evenly.
  for (int e : epochs) c.xTicks.push_back({std::log2(static_cast<double>(e)), std::to_string(e)});
  for (std::size_t i = 0; i < fractions.size(); ++i) {
    svg::Series word, comb;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g%% of corpus", fractions[i] * 100);
    word.label = std::string(buf) + ": word";
    comb.label = std::string(buf) + ": combined (" + encodingName(r.encodings.front()) + ")";
    for (const auto& t : r.training)
      if (t.fraction == fractions[i]) {
        word.x.push_back(std::log2(static_cast<double>(t.epochs)));
        word.y.push_back(t.wordSimilarity);
        comb.x.push_back(std::log2(static_cast<double>(t.epochs)));
        comb.y.push_back(t.combinedSimilarity.front());
      }
    word.colour = comb.colour = svg::paletteColour(i);
    comb.dash = "7 4";
    word.markers = comb.markers = true;
    c.series.push_back(word);
    c.series.push_back(comb);
  }
  // Headroom above 1 so the aligned (cosine near 1) curves stay off the frame.
  c.yMin = 0;
  c.yMax = 1.05;
  for (int k = 0; k <= 5; ++k) c.yTicks.push_back({k * 0.2, svg::formatTick(k * 0.2)});
  return {
      "training.svg", "Training: epochs and corpus size",
      "Word similarity cos(e_" + r.words[0].word + ", e_" + r.words[1].word +
          ") and the combined similarity (" + encodingName(r.encodings.front()) +
          ", \u221Ad) after training on the first " + fractionsText(fractions) +
          " of the corpus for a number of epochs (epochs on a log scale). Random initial vectors "
          "are nearly "
          "orthogonal; the first updates push every word along one shared direction (near-parallel "
          "vectors, the study's regime); only longer training on enough text separates them again.",
      svg::render(c, ids)};
}

// Positions as the page writes them: 1-based, "1, 6, 9 and 14".
std::string positionsText(const std::vector<std::size_t>& at) {
  std::string out;
  for (std::size_t i = 0; i < at.size(); ++i)
    out += (i == 0 ? "" : i + 1 == at.size() ? " and " : ", ") + std::to_string(at[i] + 1);
  return out;
}

std::string shortNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v == 0 ? "%.0f" : "%.2g", v);
  return buf;
}

// One heatmap per attention map: words on both axes, weights 0..1 on the colour bar.
std::vector<Figure> attentionFigures(const StudyResults& r, svg::DocumentIds& ids) {
  const AttentionStudy& a = r.attention;
  std::vector<Figure> out;
  const std::string the = "\u201C" + a.repeatedWord + "\u201D";
  for (const AttentionMapResult& m : a.maps) {
    const svg::Heatmap h = attentionHeatmap(a.tokens, m.weights, "Attention weights: " + m.setting);
    std::string caption;
    const std::string identity =
        " Identity projections: each weight is softmax over keys of x_q\u00B7x_k/\u221Ad of the "
        "input rows x = e\u00B7scale (+ PE).";
    if (m.key == "attention-words")
      caption = "Without positions, the word " + the + " at positions " +
                positionsText(a.repeatedAt) + " gets identical rows (largest difference " +
                shortNumber(a.repeatedRowsDiffWords) +
                "), and as a key it gets the same weight at each of them in every row: attention "
                "alone cannot tell the occurrences apart." +
                identity;
    else if (m.key == "attention-additive")
      caption = "With PE added to the rows, the occurrences of " + the +
                " differ (largest row difference " + shortNumber(a.repeatedRowsDiffAdditive) +
                "): each occurrence now attends in its own way." + identity;
    else if (m.key == "attention-rotary")
      caption =
          "Rotary position embedding rotates Q and K by their position, so every score "
          "depends on the two words and their offset only; the input rows carry no PE." +
          identity;
    else if (m.key == "attention-causal")
      caption =
          "Keys after the query are set to \u2212\u221E before the softmax: the map is zero "
          "above the diagonal and every row sums to 1 (the first word attends only to "
          "itself).";
    else if (m.key == "attention-mask-after-softmax") {
      const double lo = *std::min_element(m.rowSums.begin(), m.rowSums.end());
      caption =
          "The common mistake: softmax over every key, then the future weights zeroed. "
          "Rows now sum to between " +
          fixed(lo, 3) + " and 1; dividing each row by its sum gives exactly the causal map above.";
    } else
      caption =
          "Head " + std::to_string(m.head + 1) + " of " + std::to_string(m.heads) +
          ": random projections with bias initialised as PyTorch's nn.Linear (\u00B11/\u221Ad_in), "
          "head size d/" +
          std::to_string(m.heads) +
          ". Each head compares the words through its own projections, so the heads attend "
          "differently to the same input.";
    out.push_back({m.key + ".svg", h.title, caption, svg::render(h, ids)});
  }
  return out;
}

// The comparison of positions: near distances, then out to 8 × the context on a
// logarithmic axis with the context marked.
std::vector<Figure> positionFigures(const StudyResults& r, svg::DocumentIds& ids) {
  const PositionComparison& pc = r.positions;
  std::vector<Figure> out;
  auto dashFor = [](const std::string& name) -> std::string {
    if (name == "paper") return "6 4";
    if (name == "alibi") return "2 3";
    return "";
  };
  svg::LineChart nearChart;
  nearChart.title =
      "Two positions k apart: similarity under each method (d = " + std::to_string(pc.dim) + ")";
  nearChart.xLabel = "distance k";
  nearChart.yLabel = "similarity (ALiBi: weight factor)";
  nearChart.legend = svg::LineChart::LegendPlace::Right;
  nearChart.width = 820;
  svg::LineChart farChart = nearChart;
  farChart.title =
      "Past the context: out to 8 \u00D7 " + std::to_string(pc.context) + " positions (log scale)";
  farChart.xLabel = "distance k (log scale)";
  farChart.hLines = {0.0};
  nearChart.hLines = {0.0};
  for (std::size_t i = 0; i < pc.methods.size(); ++i) {
    const PositionMethod& m = pc.methods[i];
    svg::Series sn;
    sn.label = m.name;
    // The palette has eight colours; ALiBi, the ninth method, is drawn in grey.
    sn.colour = m.name == "alibi" ? std::string("#555555") : svg::paletteColour(i);
    sn.dash = dashFor(m.name);
    sn.x = m.nearDistance;
    sn.y = m.near;
    nearChart.series.push_back(sn);
    svg::Series sf = sn;
    sf.x.clear();
    sf.y.clear();
    for (std::size_t j = 0; j < m.farDistance.size(); ++j)
      if (m.farDistance[j] >= 1) {
        sf.x.push_back(std::log10(m.farDistance[j]));
        sf.y.push_back(m.far[j]);
      }
    sf.width = 1.5;
    farChart.series.push_back(sf);
  }
  const double span = std::log10(8.0 * static_cast<double>(pc.context));
  farChart.xMin = 0;
  farChart.xMax = span;
  for (double t = 0; t <= span + 1e-9; t += 1) {
    const double v = std::pow(10.0, t);
    farChart.xTicks.push_back(
        {t, v >= 1000 ? svg::formatTick(v / 1000) + "k" : svg::formatTick(v)});
  }
  farChart.markers.push_back(
      {std::log10(static_cast<double>(pc.context)), "context " + std::to_string(pc.context)});
  nearChart.markers.push_back(
      {static_cast<double>(pc.pairDistance), r.words[0].word + "/" + r.words[1].word});
  out.push_back(
      {"positions-near.svg", "Positions today: similarity of two positions, near",
       "Paper: cosine of two PE rows; rotary methods: mean_cos(k) = (2/d)\u00B7\u03A3 "
       "cos(k\u00B7\u03B8\u1D62), "
       "the same cosine with their frequencies (so paper and plain RoPE coincide); ALiBi: "
       "the mean over heads of exp(\u2212m\u2095\u00B7k) its bias puts on an attention weight. "
       "Scaling "
       "factor " +
           svg::formatTick(pc.factor) + "; the marker is the study pair's distance.",
       svg::render(nearChart, ids)});
  out.push_back(
      {"positions-far.svg", "Positions today: past the training context",
       "The same measures out to 8\u00D7 the original context (dynamic NTK and LongRoPE with the "
       "frequencies of a sequence that long). Beyond the marked context, plain RoPE's slow pairs "
       "turn to angles they never reached in training; the scaled methods keep them in range "
       "(table below: unseen pairs).",
       svg::render(farChart, ids)});
  if (pc.models.empty()) return out;
  svg::LineChart models = farChart;
  models.title = "Models at their own size, theta and context";
  models.yLabel = "mean_cos(k)";
  models.series.clear();
  models.markers.clear();
  double top = 1;
  for (std::size_t i = 0; i < pc.models.size(); ++i) {
    const ModelPositions& m = pc.models[i];
    svg::Series sm;
    sm.label = m.name;
    sm.colour = svg::paletteColour(i / 2);  // a model and its unscaled twin share a colour
    sm.dash = i % 2 == 1 ? "6 4" : "";
    sm.width = 1.5;
    for (std::size_t j = 0; j < m.farDistance.size(); ++j)
      if (m.farDistance[j] >= 1) {
        sm.x.push_back(std::log10(m.farDistance[j]));
        sm.y.push_back(m.far[j]);
        top = std::max(top, m.farDistance[j]);
      }
    models.series.push_back(sm);
    if (i % 2 == 0)
      models.markers.push_back({std::log10(static_cast<double>(m.maxPosition)),
                                m.name + " max " + std::to_string(m.maxPosition)});
  }
  models.xMax = std::log10(top);
  models.xTicks.clear();
  for (double t = 0; t <= models.xMax + 1e-9; t += 1) {
    const double v = std::pow(10.0, t);
    models.xTicks.push_back({t, v >= 1e6    ? svg::formatTick(v / 1e6) + "M"
                                : v >= 1000 ? svg::formatTick(v / 1000) + "k"
                                            : svg::formatTick(v)});
  }
  out.push_back(
      {"positions-models.svg", "Positions of real models",
       "mean_cos(k) of each model's rotary rule at its own rotated size and rope_theta, out to "
       "8\u00D7 its max_position_embeddings (marked), solid; dashed, the same size and theta "
       "without the scaling rule.",
       svg::render(models, ids)});
  return out;
}
}  // namespace

std::vector<Figure> studyFigures(const StudyResults& r) {
  if (r.pairs.empty() || r.words.size() < 2)
    throw InputError("the study results hold no pair to report");
  // One id sequence per page: the figures are inlined together in index.html, so
  // their clip-path and gradient ids must not collide, and a page rendered twice
  // (or in two threads at once) gives the same bytes.
  svg::DocumentIds ids;
  std::vector<Figure> f;
  f.push_back(similaritiesFigure(r));
  f.push_back(columnsFigure(r, ids));
  f.push_back(
      heatmapFigure(r.experiments.peInterleaved, "interleaved", "pe-heatmap-interleaved.svg", ids));
  f.push_back(heatmapFigure(r.experiments.peBook, "book", "pe-heatmap-book.svg", ids));
  f.push_back(countingFigure(r, ids));
  f.push_back(profileFigure(r, ids));
  f.push_back(sameTokenFigure(r, ids));
  f.push_back(distanceFigure(r, ids));
  f.push_back(decompositionFigure(r, ids));
  if (!r.training.empty()) f.push_back(trainingFigure(r, ids));
  for (Figure& a : attentionFigures(r, ids)) f.push_back(std::move(a));
  if (!r.positions.methods.empty())
    for (Figure& a : positionFigures(r, ids)) f.push_back(std::move(a));
  return f;
}

}  // namespace posvec
