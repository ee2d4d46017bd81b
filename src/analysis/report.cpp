#include "posvec/report.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "posvec/error.hpp"
#include "posvec/io.hpp"
#include "report_detail.hpp"
#include "svg.hpp"

namespace posvec {

namespace {

using nlohmann::json;
namespace svg = detail::svg;
using namespace detail::report;

json settingsJson(const StudySettings& s) {
  json j = {{"source", s.source},        {"trained", s.trained},    {"dim", s.dim},
            {"scale", s.scaleName},      {"scale_factor", s.scale}, {"base", s.base},
            {"vocabulary", s.vocabulary}};
  if (!s.builtWords.empty()) j["built_from_ngrams"] = s.builtWords;
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
          {"word_similarity", p.wordSimilarity},
          {"positional_similarity", p.positionalSimilarity},
          {"combined_similarity", p.combinedSimilarity}};
}

json curvesJson(const std::vector<ScaledCurve>& curves) {
  json out = json::array();
  for (const auto& c : curves) out.push_back({{"label", curveLabel(c)}, {"values", c.values}});
  return out;
}

json curvesJson(const std::vector<EncodingCurve>& curves) {
  json out = json::array();
  for (const auto& c : curves)
    out.push_back({{"label", encodingName(c.encoding)}, {"values", c.values}});
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

// Whether the first pair's word similarity is "near 1", the small-corpus effect the
// study text shows (0.9999 there); on a larger corpus words separate.
bool nearOne(const StudyResults& r) {
  return !r.pairs.empty() && r.pairs.front().wordSimilarity >= 0.95;
}

// What the vectors of this run are, for the report's note: trained on which corpus, or loaded.
std::string runFacts(const StudySettings& s) {
  std::ostringstream o;
  if (s.trained)
    o << "In this run the vectors were trained on " << s.source << " (" << s.corpusTokens
      << " tokens, " << s.vocabulary << " distinct words, " << s.train.epochs << " epochs)";
  else
    o << "In this run the vectors come from " << s.source << " (" << s.vocabulary << " words)";
  return o.str();
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

namespace {
std::string positionsTable(const StudyResults& r);  // below
}  // namespace

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
                  pairName(p).c_str(), encodingName(p.encoding).c_str(),
                  fixed(p.wordSimilarity).c_str(), fixed(p.positionalSimilarity).c_str(),
                  fixed(p.combinedSimilarity).c_str());
    o << line;
  }
  o << "\n" << explanationLine() << "\n";
  if (nearOne(r))
    o << "why word similarity is near 1: on a small corpus every word vector is pushed along one "
         "shared "
         "direction, so all pairs look alike until longer training separates them (the study's "
         "report shows it).\n";
  o << "study's published values (gensim 3 on its own 3-sentence text, book): word "
    << fixed(kPublishedWord, 8) << ", positional " << fixed(kPublishedPositional) << ", combined "
    << fixed(kPublishedCombined) << "\n";
  if (!r.positions.methods.empty()) o << "\n" << positionsTable(r);
  return o.str();
}

namespace {

json positionsJson(const PositionComparison& pc, bool curves) {
  json methods = json::array();
  auto num = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  for (const PositionMethod& m : pc.methods) {
    json j = {{"name", m.name},
              {"measure", m.measure},
              {"attention_factor", m.attentionFactor},
              {"pair_positional", num(m.pairPositional)},
              {"pair_combined", num(m.pairCombined)},
              {"at_context", num(m.atContext)},
              {"max_beyond_context", num(m.maxBeyond)},
              {"unseen_pairs", m.unseenPairs < 0 ? json(nullptr) : json(m.unseenPairs)}};
    if (curves) {
      j["near"] = {{"distance", m.nearDistance}, {"value", m.near}};
      j["far"] = {{"distance", m.farDistance}, {"value", m.far}};
    }
    methods.push_back(std::move(j));
  }
  json models = json::array();
  for (const ModelPositions& m : pc.models) {
    json j = {{"name", m.name},
              {"rope_type", m.rule},
              {"rotary_dim", m.dim},
              {"base", m.base},
              {"context", m.context},
              {"max_position_embeddings", m.maxPosition},
              {"attention_factor", m.attentionFactor},
              {"pair_positional", num(m.pairPositional)},
              {"pair_combined", num(m.pairCombined)},
              {"at_context", num(m.atContext)},
              {"at_max_position", num(m.atMax)},
              {"max_beyond", num(m.maxBeyond)},
              {"unseen_pairs", m.unseenPairs}};
    if (curves) j["far"] = {{"distance", m.farDistance}, {"value", m.far}};
    models.push_back(std::move(j));
  }
  return {{"context", pc.context},
          {"factor", pc.factor},
          {"dim", pc.dim},
          {"base", pc.base},
          {"alibi_heads", pc.alibiHeads},
          {"pair_distance", pc.pairDistance},
          {"methods", methods},
          {"models", models}};
}

std::string positionsTable(const StudyResults& r) {
  const PositionComparison& pc = r.positions;
  std::ostringstream o;
  char line[256];
  o << "positions today (d " << pc.dim << ", base " << pc.base << ", context " << pc.context
    << ", factor " << pc.factor << ", ALiBi " << pc.alibiHeads << " heads; " << toString(r.words[0])
    << " ~ " << toString(r.words[1]) << ", distance " << pc.pairDistance << "):\n";
  std::snprintf(line, sizeof line, "%-9s  %10s  %10s  %10s  %10s  %8s  %8s\n", "method",
                "positional", "combined", "at context", "max beyond", "unseen", "attn");
  o << line;
  for (const PositionMethod& m : pc.methods) {
    std::snprintf(line, sizeof line, "%-9s  %10s  %10s  %10s  %10s  %8s  %8s\n", m.name.c_str(),
                  fixed(m.pairPositional, 6).c_str(), fixed(m.pairCombined, 6).c_str(),
                  fixed(m.atContext, 6).c_str(), fixed(m.maxBeyond, 6).c_str(),
                  m.unseenPairs < 0 ? "n/a" : std::to_string(m.unseenPairs).c_str(),
                  fixed(m.attentionFactor, 4).c_str());
    o << line;
  }
  o << "positional: similarity of the two positions (ALiBi: mean exp(-m_h k)); combined: cosine of "
       "the "
       "words with their positions (paper: e*s + PE; rotary: rotated vectors); unseen: rotation "
       "pairs "
       "past angles they reached in training, at 8x the context\n";
  if (pc.models.empty()) return o.str();
  o << "\nmodels, each at its own rotated size, theta and context (unscaled: the same without "
       "its scaling rule):\n";
  std::size_t width = 5;
  for (const ModelPositions& m : pc.models) width = std::max(width, m.name.size());
  const int w = static_cast<int>(width);
  std::snprintf(line, sizeof line,
                "%-*s  %-8s  %4s  %9s  %7s  %7s  %10s  %10s  %10s  %10s  %6s  %6s\n", w, "model",
                "rule", "d_r", "theta", "context", "max", "positional", "combined", "at context",
                "at max", "unseen", "attn");
  o << line;
  for (const ModelPositions& m : pc.models) {
    std::snprintf(line, sizeof line,
                  "%-*s  %-8s  %4zu  %9.0f  %7lld  %7lld  %10s  %10s  %10s  %10s  %6lld  %6s\n", w,
                  m.name.c_str(), m.rule.c_str(), m.dim, m.base, static_cast<long long>(m.context),
                  static_cast<long long>(m.maxPosition), fixed(m.pairPositional, 6).c_str(),
                  fixed(m.pairCombined, 6).c_str(), fixed(m.atContext, 6).c_str(),
                  fixed(m.atMax, 6).c_str(), static_cast<long long>(m.unseenPairs),
                  fixed(m.attentionFactor, 4).c_str());
    o << line;
  }
  o << "at context / at max: mean_cos at the original context and at max_position_embeddings; "
       "unseen: rotation pairs that turn, at max_position_embeddings, past angles the unscaled "
       "frequencies reached within the original context\n";
  return o.str();
}

}  // namespace

std::string summaryJson(const StudyResults& r) {
  if (r.pairs.empty()) throw InputError("the study results hold no pair to report");
  const auto& p = r.pairs.front();
  json j = {{"word_similarity", p.wordSimilarity},
            {"positional_similarity", p.positionalSimilarity},
            {"combined_similarity", p.combinedSimilarity},
            {"encoding", encodingName(p.encoding)},
            {"a", toString(p.a)},
            {"b", toString(p.b)},
            {"settings", settingsJson(r.settings)}};
  json pairs = json::array();
  for (const auto& q : r.pairs) pairs.push_back(pairJson(q));
  j["pairs"] = pairs;
  if (!r.positions.methods.empty()) j["position_comparison"] = positionsJson(r.positions, false);
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string resultsJson(const StudyResults& r) {
  json j = json::parse(summaryJson(r));
  if (!r.positions.methods.empty()) j["position_comparison"] = positionsJson(r.positions, true);
  j["published"] = {{"word_similarity", kPublishedWord},
                    {"positional_similarity", kPublishedPositional},
                    {"combined_similarity", kPublishedCombined}};
  const auto& x = r.experiments;
  j["same_token"] = {{"word", x.sameTokenWord}, {"curves", curvesJson(x.sameToken)}};
  j["distance_profile"] = {{"position", x.profilePosition}, {"curves", curvesJson(x.profiles)}};
  j["combined_by_distance"] = {{"first", toString(r.words[0])},
                               {"curves", curvesJson(x.combinedByDistance)}};
  json columns = json::object();
  for (std::size_t c : x.columns) {
    std::vector<double> v;
    for (Eigen::Index p = 0; p < x.peInterleaved.rows(); ++p)
      v.push_back(x.peInterleaved(p, static_cast<Eigen::Index>(c)));
    columns[std::to_string(c)] = v;
  }
  j["pe_matrix"] = {{"positions", x.peInterleaved.rows()},
                    {"dim", x.peInterleaved.cols()},
                    {"base", r.settings.base},
                    {"encodings", {"interleaved", "book"}},
                    {"note",
                     "the heatmaps show PE rows 0..positions-1; recompute any value with "
                     "`posvec pe`"},
                    {"interleaved_columns", columns}};
  if (!r.attention.maps.empty()) {
    const AttentionStudy& a = r.attention;
    json maps = json::array();
    for (const auto& m : a.maps)
      maps.push_back({{"figure", m.key + ".svg"},
                      {"setting", m.setting},
                      {"positional", positionModeName(m.positional)},
                      {"causal", m.causal},
                      {"mask_after_softmax", m.maskAfterSoftmax},
                      {"head", m.head + 1},
                      {"heads", m.heads},
                      {"row_sums", m.rowSums},
                      {"weights", matrixJson(m.weights)}});
    j["attention"] = {{"sentence", a.sentence},
                      {"tokens", a.tokens},
                      {"repeated_word", a.repeatedWord},
                      {"repeated_at", a.repeatedAt},
                      {"repeated_rows_difference_words_only", a.repeatedRowsDiffWords},
                      {"repeated_rows_difference_additive", a.repeatedRowsDiffAdditive},
                      {"maps", maps}};
  }
  j["binary_counting"] = {{"samples_per_position", x.counting.samplesPerPosition},
                          {"bits", matrixJson(x.counting.bits)}};
  json dec = json::array();
  for (const auto& d : x.decompositions)
    dec.push_back({{"dim", d.dim},
                   {"encoding", encodingName(d.encoding)},
                   {"scale", d.scale.name()},
                   {"scale_factor", d.factor},
                   {"word_similarity", d.wordSimilarity},
                   {"positional_similarity", d.positionalSimilarity},
                   {"combined_similarity", d.combinedSimilarity},
                   {"word_share", d.wordShare},
                   {"cross_share", d.crossShare},
                   {"positional_share", d.positionalShare},
                   {"norm_ratio", d.normRatio}});
  j["decomposition"] = dec;
  json tr = json::array();
  for (const auto& t : r.training) {
    json point = {{"epochs", t.epochs},
                  {"corpus_fraction", t.fraction},
                  {"sentences", t.sentences},
                  {"tokens", t.tokens},
                  {"word_similarity", t.wordSimilarity}};
    for (std::size_t k = 0; k < r.encodings.size() && k < t.combinedSimilarity.size(); ++k)
      point["combined_" + encodingName(r.encodings[k])] = t.combinedSimilarity[k];
    tr.push_back(point);
  }
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
    rows.push_back({pairName(p), encodingName(p.encoding), fixed(p.wordSimilarity),
                    fixed(p.positionalSimilarity), fixed(p.combinedSimilarity)});
  rows.push_back({"published (gensim 3, study text)", "book", fixed(kPublishedWord, 8),
                  fixed(kPublishedPositional), fixed(kPublishedCombined)});
  o << htmlTable({"pair", "encoding", "word", "positional", "combined"}, rows);
  o << "<p>" << svg::escape(explanationLine()) << "</p>\n";
  const std::string wordSim =
      r.pairs.empty() ? std::string() : fixed(r.pairs.front().wordSimilarity, 4);
  const std::string studyText =
      "On the study's own text (three sentences repeated 150 times, 23 distinct tokens) "
      "<i>all</i> pairs reach cosine 0.999 after 5 epochs, black\u2013street as much as "
      "black\u2013brown, with skip-gram and with CBOW alike (gensim 4.2: 0.9993\u20130.9995 for "
      "both): that is where the published 0.9999 comes from.";
  if (nearOne(r))
    o << "<p class=\"note\"><b>Why is the word similarity so close to 1?</b> Not because the "
         "vectors are untrained: at initialisation two words are nearly orthogonal. On a small, "
         "repetitive corpus every word sees the same few contexts and the same noise words, so "
         "the updates of all word vectors share one direction, which soon dominates every vector. "
      << svg::escape(runFacts(r.settings)) << " and the first pair's word similarity is " << wordSim
      << ". " << studyText << " Longer training separates the words (last section). ";
  else
    o << "<p class=\"note\"><b>Word similarity " << wordSim << ", not the published 0.9999.</b> "
      << svg::escape(runFacts(r.settings))
      << ": words seen in different contexts keep different directions. " << studyText
      << " There a small, repetitive corpus pushes every word vector along one shared "
         "direction. ";
  o << "The positional similarity depends only on the encoding; the combined one on the norm of "
       "e\u00B7scale against \u2016PE\u2016 (sections below).</p>\n";
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
      const auto& all = r.experiments.decompositions;
      for (std::size_t i = 0; i < all.size(); ++i) {
        const auto& x = all[i];
        if (i == 0 || x.dim != all[i - 1].dim || x.encoding != all[i - 1].encoding) {
          d.push_back(
              {std::to_string(x.dim), encodingName(x.encoding), fixed(x.wordSimilarity, 4)});
          split.emplace_back();
        }
        if (d.size() == 1) head.push_back("s = " + pretty(x.scale.name()));
        d.back().push_back(fixed(x.combinedSimilarity, 4));
        if (x.scale == SweepScale{1, true})
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
    if (f.file == "positions-far.svg") {
      std::vector<std::vector<std::string>> t;
      for (const PositionMethod& m : r.positions.methods)
        t.push_back({m.name, m.measure, fixed(m.pairPositional, 5), fixed(m.pairCombined, 5),
                     fixed(m.atContext, 5), fixed(m.maxBeyond, 5),
                     m.unseenPairs < 0 ? "n/a" : std::to_string(m.unseenPairs),
                     fixed(m.attentionFactor, 4)});
      o << "<p>The study pair (" << svg::escape(toString(r.words[0])) << ", "
        << svg::escape(toString(r.words[1])) << ", distance " << r.positions.pairDistance
        << ") under each method; the measure at the context (" << r.positions.context
        << ") and its largest value beyond it; rotation pairs (of " << r.positions.dim / 2
        << ") that reach, at 8\u00D7 the context, angles they never reached in training.</p>\n";
      o << htmlTable({"method", "measure", "positional", "combined", "at context", "max beyond",
                      "unseen pairs", "attention factor"},
                     t);
    }
    if (f.file == "positions-models.svg") {
      std::vector<std::vector<std::string>> t;
      for (const ModelPositions& m : r.positions.models)
        t.push_back({m.name, m.rule, std::to_string(m.dim), fixed(m.base, 0),
                     std::to_string(m.context), std::to_string(m.maxPosition),
                     fixed(m.pairPositional, 5), fixed(m.pairCombined, 5), fixed(m.atContext, 5),
                     fixed(m.atMax, 5), std::to_string(m.unseenPairs),
                     fixed(m.attentionFactor, 4)});
      o << htmlTable(
          {"model", "rule", "rotated size", "theta", "context", "max position", "positional",
           "combined", "at context", "at max", "unseen pairs", "attention factor"},
          t);
    }
    if (f.file == "training.svg") {
      std::vector<std::vector<std::string>> t;
      for (const auto& x : r.training) {
        t.push_back({fixed(x.fraction * 100, 0) + "%", std::to_string(x.sentences),
                     std::to_string(x.tokens), std::to_string(x.epochs),
                     fixed(x.wordSimilarity, 5)});
        for (double c : x.combinedSimilarity) t.back().push_back(fixed(c, 5));
      }
      std::vector<std::string> head = {"corpus", "sentences", "tokens", "epochs", "word"};
      for (Encoding e : r.encodings) head.push_back("combined (" + encodingName(e) + ")");
      o << htmlTable(head, t);
    }
  }
  o << "<p>All numbers: <a href=\"results.json\">results.json</a>. Generated by the posvec "
       "study.</p>\n";
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
