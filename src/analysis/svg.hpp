// SVG plotting primitives for the report: line charts (axes, ticks, labels,
// legend, vertical markers), grouped bar charts and heatmaps with a colour bar.
// They draw the numbers they are given and compute none of the study's values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "posvec/types.hpp"

namespace posvec::detail::svg {

// Colour-blind-safe categorical palette (Okabe and Ito).
const std::string& paletteColour(std::size_t i);

// Text with &, <, >, " and ' escaped for XML.
std::string escape(const std::string& text);
// Shortest decimal that reads well on an axis (no trailing zeros, no "-0").
std::string formatTick(double v);

// Round numbers ("1-2-5" steps) covering [lo, hi]; about `target` of them.
std::vector<double> niceTicks(double lo, double hi, int target = 6);

// The element ids of one HTML page (or standalone SVG): figures inlined together
// share one id space, so each page holds one of these and passes it to every
// render call. Per page, not global: the same page always gets the same ids.
struct DocumentIds {
  int clips = 0;      // clip paths: clip1, clip2, ...
  int gradients = 0;  // colour-bar gradients: cbar1, ...
};

struct Tick {
  double value;
  std::string label;
};

struct Series {
  std::string label;  // empty: not in the legend
  std::vector<double> x, y;
  std::string colour;  // empty: palette by index
  std::string dash;    // SVG stroke-dasharray, empty: solid
  double width = 2.0;
  bool step = false;     // draw as a step function (value held until the next x)
  bool markers = false;  // a dot at every point
};

// A vertical line at x with a label (e.g. a word at its position).
struct Marker {
  double x;
  std::string label;
  std::string colour = "#666666";
};

// A point annotation: a ringed dot with a text label.
struct Note {
  double x, y;
  std::string label;
};

struct LineChart {
  std::string title;
  std::string xLabel, yLabel;
  double width = 720, height = 400;
  double leftMargin = 0;  // px left of the plot area; 0: fitted to the y label
  // Axis ranges; when lo >= hi they are fitted to the data (with nice ticks).
  double xMin = 0, xMax = 0, yMin = 0, yMax = 0;
  std::vector<Tick> xTicks, yTicks;  // empty: nice ticks
  bool yGrid = true;
  enum class LegendPlace { TopRight, BottomRight, BottomLeft, TopLeft, Right, None };
  LegendPlace legend = LegendPlace::TopRight;
  std::vector<Series> series;
  std::vector<Marker> markers;
  std::vector<Note> notes;
  std::vector<double> hLines;  // dashed horizontal reference lines (e.g. y = 0)
};
std::string render(const LineChart& chart, DocumentIds& ids);

struct BarGroup {
  std::string label;           // under the group
  std::vector<double> values;  // one per series
};
struct BarChart {
  std::string title, yLabel;
  double width = 720, height = 380;
  double yMin = 0, yMax = 1;
  std::vector<std::string> seriesLabels;  // legend, one colour each
  std::vector<BarGroup> groups;
  int valueDecimals = 4;  // value printed above each bar
};
std::string render(const BarChart& chart);

struct Heatmap {
  std::string title, xLabel, yLabel, colourLabel;
  double width = 760, height = 420;
  MatrixD values;  // rows drawn top to bottom, columns left to right
  double vMin = -1, vMax = 1;
  // Axis ticks in cell units (value = row or column index).
  std::vector<Tick> xTicks, yTicks;
  // Cells as <rect> elements instead of one embedded PNG (for small maps: crisp at
  // any zoom, and the document holds no image).
  bool vectorCells = false;
};
std::string render(const Heatmap& map, DocumentIds& ids);

// Diverging blue-white-red colour for t in [0, 1].
std::uint32_t divergingColour(double t);

// A palette PNG (8-bit indices, uncompressed deflate), for heatmaps: one pixel per
// cell keeps the SVG small whatever the matrix size.
std::string pngIndexed(const std::vector<std::uint8_t>& pixels, std::size_t width,
                       std::size_t height, const std::vector<std::uint32_t>& paletteRgb);
std::string base64(const std::string& bytes);

}  // namespace posvec::detail::svg
