// Attention maps drawn as the study report draws them, for `posvec attend --format
// svg|html`: one heatmap per (sentence, head), the tokens on both axes.
#include <sstream>

#include "posvec/error.hpp"
#include "posvec/report.hpp"
#include "report_detail.hpp"
#include "svg.hpp"

namespace posvec {

namespace detail::report {

svg::Heatmap attentionHeatmap(const std::vector<std::string>& tokens, const MatrixD& weights,
                              const std::string& title) {
  if (weights.rows() != static_cast<Eigen::Index>(tokens.size()) ||
      weights.cols() != static_cast<Eigen::Index>(tokens.size()))
    throw InputError("attention map of " + std::to_string(weights.rows()) + " x " +
                     std::to_string(weights.cols()) + " weights for " +
                     std::to_string(tokens.size()) + " tokens");
  svg::Heatmap h;
  h.title = title;
  h.xLabel = "key (attended to)";
  h.yLabel = "query";
  h.colourLabel = "attention weight";
  h.width = 820;
  h.height = 560;
  h.values = weights;
  h.vMin = 0;
  h.vMax = 1;
  for (std::size_t t = 0; t < tokens.size(); ++t) {
    h.xTicks.push_back({static_cast<double>(t), tokens[t]});
    h.yTicks.push_back({static_cast<double>(t), tokens[t]});
  }
  return h;
}

}  // namespace detail::report

std::string attentionMapSvg(const std::vector<std::string>& tokens, const MatrixD& weights,
                            const std::string& title) {
  detail::svg::Heatmap h = detail::report::attentionHeatmap(tokens, weights, title);
  h.vectorCells = true;
  detail::svg::DocumentIds ids;
  return detail::svg::render(h, ids);
}

std::string attentionMapsHtml(const std::string& pageTitle,
                              const std::vector<AttentionMapView>& maps) {
  namespace svg = detail::svg;
  // One id sequence for the page: the inline SVGs' gradient ids must not collide.
  svg::DocumentIds ids;
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>"
    << svg::escape(pageTitle) << "</title>\n<style>"
    << "body{font-family:system-ui,'DejaVu Sans',Arial,sans-serif;max-width:980px;margin:2em auto;"
       "padding:0 1em;color:#222}h1{font-size:1.5em}h2{font-size:1.15em;margin-top:1.6em}"
       "figure{margin:1em 0}figure svg{max-width:100%;height:auto;display:block}"
    << "</style></head><body>\n<h1>" << svg::escape(pageTitle) << "</h1>\n";
  for (const AttentionMapView& m : maps) {
    svg::Heatmap h = detail::report::attentionHeatmap(m.tokens, m.weights, m.title);
    h.vectorCells = true;
    h.title.clear();  // the section heading says it
    o << "<h2>" << svg::escape(m.title) << "</h2>\n<figure>\n"
      << svg::render(h, ids) << "</figure>\n";
  }
  o << "</body></html>\n";
  return o.str();
}

}  // namespace posvec
