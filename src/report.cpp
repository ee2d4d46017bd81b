#include "posvec/report.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "posvec/error.hpp"
#include "posvec/io.hpp"
#include "svg.hpp"

namespace posvec {

namespace {

using nlohmann::json;
namespace svg = detail::svg;

// The study's published values (gensim 3 on its own text, d = 512, book encoding).
constexpr double kPublishedWord = 0.99987805;
constexpr double kPublishedPositional = 0.8600013;
constexpr double kPublishedCombined = 0.9608184;

std::string fixed(double v, int decimals = 7) {
  if (!std::isfinite(v)) return "n/a";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string pairName(const PairSimilarity& p) { return toString(p.a) + " ~ " + toString(p.b); }

// "sqrt(d)" -> "√d" for figures and the page.
std::string pretty(std::string s) {
  for (std::size_t at; (at = s.find("sqrt(d)")) != std::string::npos;) s.replace(at, 7, "\u221Ad");
  return s;
}

std::vector<double> iota(std::size_t n, double start = 0) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = start + static_cast<double>(i);
  return v;
}

// Colour by scale, dash by encoding, for the curves labelled "<encoding>, scale <s>".
void styleCurve(svg::Series& s, const std::string& label) {
  const bool book = label.rfind("book", 0) == 0;
  s.dash = book ? "" : "7 4";
  std::size_t colour = 0;
  if (label.find("2 sqrt(d)") != std::string::npos)
    colour = 2;
  else if (label.find("sqrt(d)") != std::string::npos)
    colour = 1;
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
    c.groups.push_back({label, {p.word, p.positional, p.combined}});
    lo = std::min({lo, p.word, p.positional, p.combined});
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
                                  const std::vector<NamedCurve>& curves) {
  svg::LineChart c;
  c.title = std::move(title);
  c.xLabel = std::move(xLabel);
  c.yLabel = std::move(yLabel);
  c.legend = svg::LineChart::LegendPlace::Right;
  c.width = 820;
  for (const auto& curve : curves) {
    svg::Series s;
    s.label = pretty(curve.label);
    s.x = iota(curve.values.size());
    s.y = curve.values;
    styleCurve(s, curve.label);
    c.series.push_back(s);
  }
  return c;
}

Figure sameTokenFigure(const StudyResults& r) {
  const svg::LineChart c = settingCurvesChart(
      "The same word at different positions: '" + r.sameTokenWord + "'", "position k",
      "cos(x\u2080, x\u2096),  x\u2096 = e\u00B7scale + PE[k]", r.sameToken);
  return {
      "same-token.svg", "Same word, different positions",
      "How similar one token's transformer input stays to itself at position 0 as it moves "
      "to position k. A larger embedding scale keeps the word's identity (cosine near 1); "
      "with scale 1 the positional encoding dominates. Solid: book encoding, dashed: interleaved.",
      svg::render(c)};
}

Figure profileFigure(const StudyResults& r) {
  svg::LineChart c;
  c.title = "Similarity versus distance: cos(PE[" + std::to_string(r.profilePosition) + "], PE[q])";
  c.xLabel = "position q";
  c.yLabel = "cosine similarity";
  c.legend = svg::LineChart::LegendPlace::TopRight;
  c.hLines = {0};
  for (std::size_t i = 0; i < r.profiles.size(); ++i) {
    svg::Series s;
    s.label = r.profiles[i].label;
    s.x = iota(r.profiles[i].values.size());
    s.y = r.profiles[i].values;
    s.width = 1.4;
    s.colour = svg::paletteColour(i == 0 ? 1 : 0);
    c.series.push_back(s);
  }
  c.notes.push_back({static_cast<double>(r.profilePosition), 1.0,
                     "q = p = " + std::to_string(r.profilePosition)});
  double lo = 0;
  for (const auto& p : r.profiles)
    for (double v : p.values) lo = std::min(lo, v);
  c.yMin = lo < 0 ? -1 : 0;
  c.yMax = 1.12;
  for (double v = c.yMin; v <= 1.0 + 1e-9; v += 0.2)
    c.yTicks.push_back({v, svg::formatTick(std::round(v * 10) / 10)});
  return {"distance-profile.svg", "Similarity versus distance",
          "Cosine of the encoding of position " + std::to_string(r.profilePosition) +
              " with every other position. It peaks at q = p and falls off with |p \u2212 q|; "
              "the interleaved profile is symmetric around p. The book encoding's frequencies fall "
              "twice as fast, so most of its columns are nearly constant and every position looks "
              "alike (high floor).",
          svg::render(c)};
}

Figure heatmapFigure(const MatrixD& m, const std::string& name, const std::string& file) {
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
  return {file, "PE matrix (" + name + ")", caption, svg::render(h)};
}

Figure columnsFigure(const StudyResults& r) {
  svg::LineChart c;
  c.title = "Columns of PE (interleaved) as sinusoids, with the sentence's words";
  c.xLabel = "position";
  c.yLabel = "PE value";
  c.legend = svg::LineChart::LegendPlace::Right;
  c.width = 840;
  c.height = 420;
  const auto& words = studySentenceWords();
  const std::size_t n =
      std::min<std::size_t>(static_cast<std::size_t>(r.peInterleaved.rows()), words.size() + 4);
  for (std::size_t i = 0; i < r.columns.size(); ++i) {
    // Sampled at integer positions; the dots are where words sit.
    svg::Series s;
    s.label = "column " + std::to_string(r.columns[i]);
    s.x = iota(n);
    for (std::size_t p = 0; p < n; ++p)
      s.y.push_back(
          r.peInterleaved(static_cast<Eigen::Index>(p), static_cast<Eigen::Index>(r.columns[i])));
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
              "\u201D at their positions (the study's pair in red). Column 2k is sin(p / "
              "10000^(2k/d)): "
              "each column is a clock with its own period.",
          svg::render(c)};
}

Figure countingFigure(const StudyResults& r) {
  const auto& b = r.counting;
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
  return {
      "binary-counting.svg", "Binary counting",
      "Black steps: bit k of the position, which flips every 2^k positions. Coloured: a sinusoid "
      "with the same period. A positional encoding uses such waves at geometric frequencies "
      "(10000^(\u22122k/d)), continuous so that nearby positions get nearby vectors.",
      svg::render(c)};
}

Figure distanceFigure(const StudyResults& r) {
  const std::string a = r.words[0].word, b = r.words[1].word;
  const svg::LineChart c = settingCurvesChart(
      "Combined similarity of '" + a + "' at " + std::to_string(r.words[0].position) + " and '" +
          b + "' k positions later",
      "distance k", "combined cosine similarity", r.combinedByDistance);
  return {
      "combined-vs-distance.svg", "Combined similarity versus distance",
      "The study's combined similarity as the second word moves away from the first. Scaling the "
      "embeddings by \u221Ad keeps the word similarity in charge; with scale 1 the positions take "
      "over. "
      "Solid: book, dashed: interleaved.",
      svg::render(c)};
}

// Index of `value` in `list`, appending it first if it is new (first-seen order).
template <typename T>
std::size_t indexOf(std::vector<T>& list, const T& value) {
  auto it = std::find(list.begin(), list.end(), value);
  if (it == list.end()) it = list.insert(list.end(), value);
  return static_cast<std::size_t>(it - list.begin());
}

Figure decompositionFigure(const StudyResults& r) {
  svg::LineChart c;
  c.title = "Combined similarity as the embedding scale and d_model vary";
  c.xLabel = "embedding scale";
  c.yLabel = "combined cosine similarity";
  c.legend = svg::LineChart::LegendPlace::Right;
  c.width = 820;
  std::vector<std::string> names;
  std::vector<std::pair<std::size_t, Encoding>> keys;
  for (const auto& d : r.decompositions) {
    indexOf(names, d.scaleName);
    indexOf(keys, std::pair<std::size_t, Encoding>{d.dim, d.encoding});
  }
  for (std::size_t i = 0; i < names.size(); ++i)
    c.xTicks.push_back({static_cast<double>(i), pretty(names[i])});
  std::vector<std::size_t> dims;
  for (const auto& k : keys) indexOf(dims, k.first);
  for (const auto& [dim, enc] : keys) {
    svg::Series s;
    s.label = "d=" + std::to_string(dim) + ", " + encodingName(enc);
    for (const auto& d : r.decompositions)
      if (d.dim == dim && d.encoding == enc) {
        s.x.push_back(static_cast<double>(indexOf(names, d.scaleName)));
        s.y.push_back(d.combined);
      }
    s.colour = svg::paletteColour(indexOf(dims, dim));
    s.dash = enc == Encoding::Book ? "" : "7 4";
    s.markers = true;
    c.series.push_back(s);
  }
  c.xMin = -0.2;
  c.xMax = static_cast<double>(names.size()) - 0.8;
  return {"decomposition.svg", "Words versus positions",
          "Scale 0 leaves the positional similarity alone; as the scale grows the word vectors "
          "take over "
          "and the combined similarity moves towards the word similarity. The table below splits "
          "the dot "
          "product into its word, cross and position terms, and gives the norm ratio "
          "\u2016e\u00B7s\u2016 / \u2016PE\u2016 "
          "that explains it. Solid: book, dashed: interleaved.",
          svg::render(c)};
}

Figure trainingFigure(const StudyResults& r) {
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
    comb.label = std::string(buf) + ": combined (book)";
    for (const auto& t : r.training)
      if (t.fraction == fractions[i]) {
        word.x.push_back(std::log2(static_cast<double>(t.epochs)));
        word.y.push_back(t.word);
        comb.x.push_back(std::log2(static_cast<double>(t.epochs)));
        comb.y.push_back(t.combinedBook);
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
          ") and the combined similarity (book, \u221Ad) after training on the first 10%, 30% or "
          "all "
          "of the corpus for a number of epochs (epochs on a log scale). Random initial vectors "
          "are nearly "
          "orthogonal; the first updates push every word along one shared direction (near-parallel "
          "vectors, the study's regime); only longer training on enough text separates them again.",
      svg::render(c)};
}

json settingsJson(const StudySettings& s) {
  json j = {{"source", s.source},        {"trained", s.trained},    {"dim", s.dim},
            {"scale", s.scaleName},      {"scale_factor", s.scale}, {"base", s.base},
            {"vocabulary", s.vocabulary}};
  if (s.trained) {
    j["epochs"] = s.train.epochs;
    j["window"] = s.train.window;
    j["min_count"] = s.train.minCount;
    j["sample"] = s.train.sample;
    j["negative"] = s.train.negative;
    j["seed"] = s.train.seed;
    j["threads"] = s.train.threads;
    j["architecture"] = s.train.architecture == Architecture::SkipGram ? "skipgram" : "cbow";
    j["corpus_tokens"] = s.corpusTokens;
    j["train_seconds"] = s.trainSeconds;
  }
  return j;
}

json pairJson(const PairSimilarity& p) {
  return {{"a", p.a.word},
          {"position_a", p.a.position},
          {"b", p.b.word},
          {"position_b", p.b.position},
          {"encoding", encodingName(p.encoding)},
          {"scale_factor", p.scale},
          {"word_similarity", p.word},
          {"positional_similarity", p.positional},
          {"combined_similarity", p.combined}};
}

json curvesJson(const std::vector<NamedCurve>& curves) {
  json out = json::array();
  for (const auto& c : curves) out.push_back({{"label", c.label}, {"values", c.values}});
  return out;
}

json matrixJson(const MatrixD& m) {
  json out = json::array();
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    std::vector<double> row(m.cols());
    for (Eigen::Index c = 0; c < m.cols(); ++c) row[static_cast<std::size_t>(c)] = m(r, c);
    out.push_back(row);
  }
  return out;
}

std::string htmlTable(const std::vector<std::string>& head,
                      const std::vector<std::vector<std::string>>& rows) {
  std::ostringstream o;
  o << "<table><thead><tr>";
  for (const auto& h : head) o << "<th>" << svg::escape(h) << "</th>";
  o << "</tr></thead><tbody>\n";
  for (const auto& row : rows) {
    o << "<tr>";
    for (const auto& cell : row) o << "<td>" << svg::escape(cell) << "</td>";
    o << "</tr>\n";
  }
  o << "</tbody></table>\n";
  return o.str();
}

std::string explanationLine() {
  return "book vs interleaved: the book's exponent is 2i/d with i the even column index "
         "(interleaved "
         "uses i/d), so its frequencies fall twice as fast and low-frequency, nearly constant "
         "columns "
         "dominate: any two positions look more alike.";
}

std::string sourceLine(const StudySettings& s) {
  std::ostringstream o;
  if (s.trained) {
    o << s.dim << "-d skip-gram vectors trained on " << s.source << " (" << s.train.epochs
      << " epochs, window " << s.train.window << ", min-count " << s.train.minCount << ", seed "
      << s.train.seed << "; " << s.vocabulary << " words, " << s.corpusTokens << " tokens, "
      << fixed(s.trainSeconds, 2) << " s)";
  } else {
    o << s.dim << "-d vectors from " << s.source << " (" << s.vocabulary << " words)";
  }
  o << "; embeddings scaled by " << s.scaleName << " = " << fixed(s.scale, 4);
  return o.str();
}

}  // namespace

std::vector<Figure> studyFigures(const StudyResults& r) {
  if (r.pairs.empty() || r.words.size() < 2)
    throw InputError("the study results hold no pair to report");
  std::vector<Figure> f;
  f.push_back(similaritiesFigure(r));
  f.push_back(columnsFigure(r));
  f.push_back(heatmapFigure(r.peInterleaved, "interleaved", "pe-heatmap-interleaved.svg"));
  f.push_back(heatmapFigure(r.peBook, "book", "pe-heatmap-book.svg"));
  f.push_back(countingFigure(r));
  f.push_back(profileFigure(r));
  f.push_back(sameTokenFigure(r));
  f.push_back(distanceFigure(r));
  f.push_back(decompositionFigure(r));
  if (!r.training.empty()) f.push_back(trainingFigure(r));
  return f;
}

std::string studyTable(const StudyResults& r) {
  std::ostringstream o;
  o << "black/brown study: " << sourceLine(r.settings) << "\n\n";
  std::size_t w = 4;
  for (const auto& p : r.pairs) w = std::max(w, pairName(p).size());
  char line[256];
  std::snprintf(line, sizeof line, "%-*s  %-12s  %10s  %10s  %10s\n", static_cast<int>(w), "pair",
                "encoding", "word", "positional", "combined");
  o << line;
  for (const auto& p : r.pairs) {
    std::snprintf(line, sizeof line, "%-*s  %-12s  %10s  %10s  %10s\n", static_cast<int>(w),
                  pairName(p).c_str(), encodingName(p.encoding).c_str(), fixed(p.word).c_str(),
                  fixed(p.positional).c_str(), fixed(p.combined).c_str());
    o << line;
  }
  o << "\n" << explanationLine() << "\n";
  o << "why word similarity is near 1: on a small corpus every word vector is pushed along one "
       "shared "
       "direction, so all pairs look alike until longer training separates them (--report shows "
       "it).\n";
  o << "study's published values (gensim 3 on its own 3-sentence text, book): word "
    << fixed(kPublishedWord, 8) << ", positional " << fixed(kPublishedPositional) << ", combined "
    << fixed(kPublishedCombined) << "\n";
  return o.str();
}

std::string summaryJson(const StudyResults& r) {
  if (r.pairs.empty()) throw InputError("the study results hold no pair to report");
  const auto& p = r.pairs.front();
  json j = {{"word_similarity", p.word},
            {"positional_similarity", p.positional},
            {"combined_similarity", p.combined},
            {"encoding", encodingName(p.encoding)},
            {"a", toString(p.a)},
            {"b", toString(p.b)},
            {"settings", settingsJson(r.settings)}};
  json pairs = json::array();
  for (const auto& q : r.pairs) pairs.push_back(pairJson(q));
  j["pairs"] = pairs;
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string resultsJson(const StudyResults& r) {
  json j = json::parse(summaryJson(r));
  j["published"] = {{"word_similarity", kPublishedWord},
                    {"positional_similarity", kPublishedPositional},
                    {"combined_similarity", kPublishedCombined}};
  j["same_token"] = {{"word", r.sameTokenWord}, {"curves", curvesJson(r.sameToken)}};
  j["distance_profile"] = {{"position", r.profilePosition}, {"curves", curvesJson(r.profiles)}};
  j["combined_by_distance"] = {{"first", toString(r.words[0])},
                               {"curves", curvesJson(r.combinedByDistance)}};
  json columns = json::object();
  for (std::size_t c : r.columns) {
    std::vector<double> v;
    for (Eigen::Index p = 0; p < r.peInterleaved.rows(); ++p)
      v.push_back(r.peInterleaved(p, static_cast<Eigen::Index>(c)));
    columns[std::to_string(c)] = v;
  }
  j["pe_matrix"] = {{"positions", r.peInterleaved.rows()},
                    {"dim", r.peInterleaved.cols()},
                    {"base", r.settings.base},
                    {"encodings", {"interleaved", "book"}},
                    {"note",
                     "the heatmaps show PE rows 0..positions-1; recompute any value with "
                     "`posvec pe`"},
                    {"interleaved_columns", columns}};
  j["binary_counting"] = {{"samples_per_position", r.counting.samplesPerPosition},
                          {"bits", matrixJson(r.counting.bits)}};
  json dec = json::array();
  for (const auto& d : r.decompositions)
    dec.push_back({{"dim", d.dim},
                   {"encoding", encodingName(d.encoding)},
                   {"scale", d.scaleName},
                   {"scale_factor", d.scale},
                   {"word_similarity", d.word},
                   {"positional_similarity", d.positional},
                   {"combined_similarity", d.combined},
                   {"word_share", d.wordShare},
                   {"cross_share", d.crossShare},
                   {"positional_share", d.positionalShare},
                   {"norm_ratio", d.normRatio}});
  j["decomposition"] = dec;
  json tr = json::array();
  for (const auto& t : r.training)
    tr.push_back({{"epochs", t.epochs},
                  {"corpus_fraction", t.fraction},
                  {"sentences", t.sentences},
                  {"tokens", t.tokens},
                  {"word_similarity", t.word},
                  {"combined_book", t.combinedBook},
                  {"combined_interleaved", t.combinedInterleaved}});
  j["training"] = tr;
  return j.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string reportHtml(const StudyResults& r, const std::vector<Figure>& figures) {
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    << "<title>posvec: the black/brown study</title>\n<style>\n"
    << "body{font-family:system-ui,'DejaVu Sans',Arial,sans-serif;max-width:980px;margin:2em auto;"
       "padding:0 1em;color:#222;line-height:1.5}\n"
    << "h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.25em;margin-top:2em;border-bottom:1px "
       "solid #ddd}\n"
    << "table{border-collapse:collapse;margin:1em 0;font-variant-numeric:tabular-nums}\n"
    << "th,td{padding:.3em .6em;border-bottom:1px solid #e2e2e2;text-align:right}"
       "th:first-child,td:first-child,th:nth-child(2),td:nth-child(2){text-align:left}th{"
       "background:#f4f4f4}\n"
    << "figure{margin:1.5em 0}figure svg{max-width:100%;height:auto;display:block}"
       "figcaption{color:#444;font-size:.95em;margin-top:.4em}\n"
    << ".note{background:#f7f7f2;border-left:4px solid #E69F00;padding:.6em 1em}\n"
    << "code{background:#f2f2f2;padding:0 .25em}</style></head><body>\n";
  o << "<h1>The black/brown study</h1>\n<p>" << svg::escape(sourceLine(r.settings)) << ".</p>\n";
  o << "<p>Sentence: \u201C" << kStudySentence
    << "\u201D. Positions are 1-based (\u201CThe\u201D is 1) and are the "
    << "rows of PE each word receives.</p>\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : r.pairs)
    rows.push_back({pairName(p), encodingName(p.encoding), fixed(p.word), fixed(p.positional),
                    fixed(p.combined)});
  rows.push_back({"published (gensim 3, study text)", "book", fixed(kPublishedWord, 8),
                  fixed(kPublishedPositional), fixed(kPublishedCombined)});
  o << htmlTable({"pair", "encoding", "word", "positional", "combined"}, rows);
  o << "<p>" << svg::escape(explanationLine()) << "</p>\n";
  o << "<p class=\"note\"><b>Why is the word similarity so close to 1?</b> Not because the "
       "vectors are untrained: at initialisation two words are nearly orthogonal. On a small, "
       "repetitive corpus every word sees the same few contexts and the same noise words, so the "
       "updates of all word vectors share one direction, which soon dominates every vector. On the "
       "study's own text (three sentences repeated 150 times, 23 distinct tokens) <i>all</i> pairs "
       "reach cosine 0.999 after 5 epochs, black\u2013street as much as black\u2013brown, with "
       "skip-gram and with CBOW alike (gensim 4.2: 0.9993\u20130.9995 for both). Longer training "
       "separates them (last section). The positional similarity depends only on the encoding; the "
       "combined one on the norm of e\u00B7scale against \u2016PE\u2016 (sections below).</p>\n";
  for (const auto& f : figures) {
    o << "<h2 id=\"" << f.file.substr(0, f.file.size() - 4) << "\">" << svg::escape(f.title)
      << "</h2>\n";
    o << "<figure>\n";
    // Drop nothing: the SVG documents are standalone and valid inline in HTML5.
    o << f.svg;
    o << "<figcaption>" << svg::escape(f.caption) << " <a href=\"" << f.file << "\">" << f.file
      << "</a></figcaption></figure>\n";
    if (f.file == "decomposition.svg") {
      // One row per (d, encoding): the combined similarity at each scale, then the split of
      // the dot product and the norm ratio at √d (every scale's split is in results.json).
      std::vector<std::vector<std::string>> d;
      std::vector<std::vector<std::string>> split;
      std::vector<std::string> head = {"d", "encoding", "word"};
      for (std::size_t i = 0; i < r.decompositions.size(); ++i) {
        const auto& x = r.decompositions[i];
        if (i == 0 || x.dim != r.decompositions[i - 1].dim ||
            x.encoding != r.decompositions[i - 1].encoding) {
          d.push_back({std::to_string(x.dim), encodingName(x.encoding), fixed(x.word, 4)});
          split.emplace_back();
        }
        if (d.size() == 1) head.push_back("s = " + pretty(x.scaleName));
        d.back().push_back(fixed(x.combined, 4));
        if (x.scaleName == "sqrt(d)")
          split.back() = {fixed(x.wordShare, 3), fixed(x.crossShare, 3),
                          fixed(x.positionalShare, 3), fixed(x.normRatio, 3)};
      }
      for (std::size_t i = 0; i < d.size(); ++i)
        d[i].insert(d[i].end(), split[i].begin(), split[i].end());
      head.insert(head.end(),
                  {"words", "cross", "positions", "\u2016e\u00B7\u221Ad\u2016/\u2016PE\u2016"});
      o << "<p>Combined similarity at each scale s, then the shares of x\u00B7y at s = \u221Ad "
           "(words, "
           "cross terms, positions) and the norm ratio. With s = \u221Ad the ratio is "
           "\u221A2\u00B7\u2016e\u2016 whatever d is, since \u2016PE[p]\u2016 = \u221A(d/2): the "
           "trained "
           "norm of the word vectors decides the mix.</p>\n";
      o << htmlTable(head, d);
    }
    if (f.file == "training.svg") {
      std::vector<std::vector<std::string>> t;
      for (const auto& x : r.training)
        t.push_back({fixed(x.fraction * 100, 0) + "%", std::to_string(x.sentences),
                     std::to_string(x.tokens), std::to_string(x.epochs), fixed(x.word, 5),
                     fixed(x.combinedBook, 5), fixed(x.combinedInterleaved, 5)});
      o << htmlTable({"corpus", "sentences", "tokens", "epochs", "word", "combined (book)",
                      "combined (interleaved)"},
                     t);
    }
  }
  o << "<p>All numbers: <a href=\"results.json\">results.json</a>. Generated by <code>posvec study "
       "--report</code>.</p>\n";
  o << "</body></html>\n";
  return o.str();
}

void writeReport(const StudyResults& r, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw IoError("cannot create the report directory '" + dir + "'" +
                  (ec ? ": " + ec.message() : std::string()));
  const auto figures = studyFigures(r);
  const auto path = [&](const std::string& name) {
    return (std::filesystem::path(dir) / name).string();
  };
  for (const auto& f : figures)
    writeFileAtomically(path(f.file), [&](std::ostream& out) { out << f.svg; });
  writeFileAtomically(path("results.json"), [&](std::ostream& out) { out << resultsJson(r); });
  // The page last: when it exists, everything it links to does.
  const std::string html = reportHtml(r, figures);
  writeFileAtomically(path("index.html"), [&](std::ostream& out) { out << html; });
}

}  // namespace posvec
