// What the report's two halves share: the study's published values and the
// formatting of numbers and names (report_figures.cpp draws, report.cpp writes
// the table, JSON and page).
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

#include "posvec/study_results.hpp"
#include "svg.hpp"

namespace posvec::detail::report {

// An attention map as the report draws it: weights 0..1, keys across, queries down,
// the tokens on both axes (attention_maps.cpp; the study's figures and `attend` share it).
svg::Heatmap attentionHeatmap(const std::vector<std::string>& tokens, const MatrixD& weights,
                              const std::string& title);

// The study's published values (gensim 3 on its own text, d = 512, book encoding).
inline constexpr double kPublishedWord = 0.99987805;
inline constexpr double kPublishedPositional = 0.8600013;
inline constexpr double kPublishedCombined = 0.9608184;

inline std::string fixed(double v, int decimals = 7) {
  if (!std::isfinite(v)) return "n/a";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

inline std::string pairName(const PairSimilarity& p) {
  return toString(p.a) + " ~ " + toString(p.b);
}

// "sqrt(d)" -> "√d" for figures and the page.
inline std::string pretty(std::string s) {
  for (std::size_t at; (at = s.find("sqrt(d)")) != std::string::npos;) s.replace(at, 7, "\u221Ad");
  return s;
}

// "book, scale sqrt(d)": a curve's name in the legends and in results.json.
inline std::string curveLabel(const ScaledCurve& c) {
  return encodingName(c.encoding) + ", scale " + c.scale.name();
}

}  // namespace posvec::detail::report
