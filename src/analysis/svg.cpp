#include "svg.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace posvec::detail::svg {

namespace {

constexpr const char* kFont = "font-family=\"system-ui, 'DejaVu Sans', Arial, sans-serif\"";

// Coordinates with one decimal: enough for the eye, small files.
std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  std::string s = buf;
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  if (s == "-0") s = "0";
  return s;
}

std::string rgbHex(std::uint32_t rgb) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%06x", rgb & 0xffffffu);
  return buf;
}

std::string header(double w, double h) {
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(w) << "\" height=\"" << num(h)
    << "\" viewBox=\"0 0 " << num(w) << ' ' << num(h) << "\" " << kFont << " font-size=\"12\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  return o.str();
}

std::string text(double x, double y, const std::string& s, const std::string& anchor = "start",
                 const std::string& extra = "") {
  std::ostringstream o;
  o << "<text x=\"" << num(x) << "\" y=\"" << num(y) << "\"";
  if (anchor != "start") o << " text-anchor=\"" << anchor << "\"";
  if (!extra.empty()) o << ' ' << extra;
  o << '>' << escape(s) << "</text>\n";
  return o.str();
}

// Rough width of a label in px at font size 12, for legend boxes and spacing.
double textWidth(const std::string& s, double size = 12) {
  double w = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) == 0x80) continue;  // UTF-8 continuation byte
    w += (c == 'i' || c == 'l' || c == '.' || c == ',' || c == ':' || c == '(' || c == ')') ? 0.3
         : (c >= 'A' && c <= 'Z')                                                           ? 0.68
                                                                                            : 0.56;
  }
  return w * size;
}

struct AxisRange {
  double lo, hi;
};

AxisRange dataRange(const std::vector<Series>& series, bool xAxis) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const auto& s : series)
    for (double v : xAxis ? s.x : s.y)
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  if (!(lo <= hi)) lo = 0, hi = 1;
  if (lo == hi) lo -= 0.5, hi += 0.5;
  return {lo, hi};
}

struct Frame {
  double left, top, right, bottom;  // plot area in px
  AxisRange x, y;
  double px(double v) const { return left + (v - x.lo) / (x.hi - x.lo) * (right - left); }
  double py(double v) const { return bottom - (v - y.lo) / (y.hi - y.lo) * (bottom - top); }
};

std::string axes(const Frame& f, const std::vector<Tick>& xt, const std::vector<Tick>& yt,
                 bool yGrid, const std::string& xLabel, const std::string& yLabel) {
  std::ostringstream o;
  if (yGrid)
    for (const auto& t : yt)
      o << "<line x1=\"" << num(f.left) << "\" x2=\"" << num(f.right) << "\" y1=\""
        << num(f.py(t.value)) << "\" y2=\"" << num(f.py(t.value)) << "\" stroke=\"#e4e4e4\"/>\n";
  o << "<rect x=\"" << num(f.left) << "\" y=\"" << num(f.top) << "\" width=\""
    << num(f.right - f.left) << "\" height=\"" << num(f.bottom - f.top)
    << "\" fill=\"none\" stroke=\"#444\"/>\n";
  for (const auto& t : xt) {
    const double x = f.px(t.value);
    o << "<line x1=\"" << num(x) << "\" x2=\"" << num(x) << "\" y1=\"" << num(f.bottom)
      << "\" y2=\"" << num(f.bottom + 5) << "\" stroke=\"#444\"/>\n";
    o << text(x, f.bottom + 18, t.label, "middle", "fill=\"#333\"");
  }
  for (const auto& t : yt) {
    const double y = f.py(t.value);
    o << "<line x1=\"" << num(f.left - 5) << "\" x2=\"" << num(f.left) << "\" y1=\"" << num(y)
      << "\" y2=\"" << num(y) << "\" stroke=\"#444\"/>\n";
    o << text(f.left - 8, y + 4, t.label, "end", "fill=\"#333\"");
  }
  if (!xLabel.empty())
    o << text((f.left + f.right) / 2, f.bottom + 40, xLabel, "middle", "font-size=\"13\"");
  if (!yLabel.empty()) {
    const double cx = f.left - 52, cy = (f.top + f.bottom) / 2;
    o << text(cx, cy, yLabel, "middle",
              "font-size=\"13\" transform=\"rotate(-90 " + num(cx) + ' ' + num(cy) + ")\"");
  }
  return o.str();
}

std::vector<Tick> ticksFor(const std::vector<Tick>& given, AxisRange r, int target) {
  if (!given.empty()) return given;
  std::vector<Tick> out;
  for (double v : niceTicks(r.lo, r.hi, target))
    if (v >= r.lo - 1e-9 * (r.hi - r.lo) && v <= r.hi + 1e-9 * (r.hi - r.lo))
      out.push_back({v, formatTick(v)});
  return out;
}

// The title, centred; a title too long for the figure at 15 px is set smaller
// (down to 10 px) so that neither end is clipped. Bold glyphs are taken as 15 %
// wider than textWidth's estimate (DejaVu Sans Bold, the fallback font, is wide).
std::string titleText(double width, const std::string& title) {
  if (title.empty()) return std::string();
  double size = 15;
  const double room = width - 24, wide = 1.15 * textWidth(title, size);
  if (wide > room) size = std::max(10.0, std::floor(size * room / wide * 10) / 10);
  return text(width / 2, 22, title, "middle",
              "font-size=\"" + num(size) + "\" font-weight=\"600\"");
}

std::string seriesColour(const Series& s, std::size_t i) {
  return s.colour.empty() ? paletteColour(i) : s.colour;
}

struct LegendEntry {
  std::string label, colour, dash;
  bool box = false;
};

std::string legendBox(const std::vector<LegendEntry>& entries, double x, double y) {
  if (entries.empty()) return {};
  double w = 0;
  for (const auto& e : entries) w = std::max(w, textWidth(e.label));
  w += 46;
  const double h = 8 + 18.0 * static_cast<double>(entries.size());
  std::ostringstream o;
  o << "<g class=\"legend\"><rect x=\"" << num(x) << "\" y=\"" << num(y) << "\" width=\"" << num(w)
    << "\" height=\"" << num(h)
    << "\" fill=\"#ffffff\" fill-opacity=\"0.92\" stroke=\"#bbb\" rx=\"3\"/>\n";
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const double cy = y + 13 + 18.0 * static_cast<double>(i);
    const auto& e = entries[i];
    if (e.box)
      o << "<rect x=\"" << num(x + 8) << "\" y=\"" << num(cy - 6)
        << "\" width=\"24\" height=\"12\" fill=\"" << e.colour << "\"/>\n";
    else
      o << "<line x1=\"" << num(x + 8) << "\" x2=\"" << num(x + 32) << "\" y1=\"" << num(cy)
        << "\" y2=\"" << num(cy) << "\" stroke=\"" << e.colour << "\" stroke-width=\"2.5\""
        << (e.dash.empty() ? "" : " stroke-dasharray=\"" + e.dash + "\"") << "/>\n";
    o << text(x + 38, cy + 4, e.label);
  }
  o << "</g>\n";
  return o.str();
}

double legendWidth(const std::vector<LegendEntry>& entries) {
  double w = 0;
  for (const auto& e : entries) w = std::max(w, textWidth(e.label));
  return w + 46;
}

}  // namespace

const std::string& paletteColour(std::size_t i) {
  static const std::array<std::string, 8> colours = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                                     "#E69F00", "#56B4E9", "#000000", "#F0E442"};
  return colours[i % colours.size()];
}

std::string escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string formatTick(double v) {
  if (std::abs(v) < 1e-12) return "0";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::vector<double> niceTicks(double lo, double hi, int target) {
  if (!(hi > lo)) return {lo};
  const double raw = (hi - lo) / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  std::vector<double> out;
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step)
    out.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
  return out;
}

std::string render(const LineChart& c, DocumentIds& ids) {
  std::vector<LegendEntry> legend;
  for (std::size_t i = 0; i < c.series.size(); ++i)
    if (!c.series[i].label.empty())
      legend.push_back({c.series[i].label, seriesColour(c.series[i], i), c.series[i].dash});
  const bool right = c.legend == LineChart::LegendPlace::Right && !legend.empty();
  Frame f;
  f.left = c.leftMargin > 0 ? c.leftMargin : c.yLabel.empty() ? 56 : 74;
  f.top = (c.title.empty() ? 16 : 40) + (c.markers.empty() ? 0 : 34);
  f.right = c.width - (right ? legendWidth(legend) + 24 : 20);
  f.bottom = c.height - (c.xLabel.empty() ? 30 : 52);
  f.x = c.xMin < c.xMax ? AxisRange{c.xMin, c.xMax} : dataRange(c.series, true);
  if (c.yMin < c.yMax) {
    f.y = {c.yMin, c.yMax};
  } else {
    AxisRange r = dataRange(c.series, false);
    const auto t = niceTicks(r.lo, r.hi, 6);
    const double step = t.size() > 1 ? t[1] - t[0] : 1;
    f.y = {std::floor(r.lo / step + 1e-9) * step, std::ceil(r.hi / step - 1e-9) * step};
    if (f.y.hi <= f.y.lo) f.y.hi = f.y.lo + step;
  }
  std::ostringstream o;
  o << header(c.width, c.height) << titleText(c.width, c.title);
  o << axes(f, ticksFor(c.xTicks, f.x, 8), ticksFor(c.yTicks, f.y, 6), c.yGrid, c.xLabel, c.yLabel);
  const std::string clip = "clip" + std::to_string(++ids.clips);
  o << "<clipPath id=\"" << clip << "\"><rect x=\"" << num(f.left) << "\" y=\"" << num(f.top)
    << "\" width=\"" << num(f.right - f.left) << "\" height=\"" << num(f.bottom - f.top)
    << "\"/></clipPath>\n";
  for (double h : c.hLines)
    o << "<line x1=\"" << num(f.left) << "\" x2=\"" << num(f.right) << "\" y1=\"" << num(f.py(h))
      << "\" y2=\"" << num(f.py(h)) << "\" stroke=\"#888\" stroke-dasharray=\"4 3\"/>\n";
  // Markers: dashed vertical lines, labels staggered on two rows above the plot.
  for (std::size_t i = 0; i < c.markers.size(); ++i) {
    const auto& m = c.markers[i];
    const double x = f.px(m.x);
    o << "<line x1=\"" << num(x) << "\" x2=\"" << num(x) << "\" y1=\""
      << num(f.top - (i % 2 ? 4 : 18)) << "\" y2=\"" << num(f.bottom) << "\" stroke=\"" << m.colour
      << "\" stroke-dasharray=\"2 3\" stroke-opacity=\"0.7\"/>\n";
    o << text(x, f.top - (i % 2 ? 7 : 21), m.label, "middle",
              "fill=\"" + m.colour + "\" font-size=\"11\"");
  }
  o << "<g clip-path=\"url(#" << clip << ")\" fill=\"none\" stroke-linejoin=\"round\">\n";
  for (std::size_t i = 0; i < c.series.size(); ++i) {
    const auto& s = c.series[i];
    const std::string colour = seriesColour(s, i);
    std::ostringstream d;
    bool pen = false;
    const std::size_t n = std::min(s.x.size(), s.y.size());
    for (std::size_t k = 0; k < n; ++k) {
      if (!std::isfinite(s.y[k])) {
        pen = false;
        continue;
      }
      const double x = f.px(s.x[k]), y = f.py(s.y[k]);
      if (s.step && pen) d << " H" << num(x);
      d << (pen ? " L" : " M") << num(x) << ' ' << num(y);
      if (s.step && k + 1 == n) d << " H" << num(f.px(s.x[k] + (k > 0 ? s.x[k] - s.x[k - 1] : 1)));
      pen = true;
    }
    o << "<path d=\"" << d.str() << "\" stroke=\"" << colour << "\" stroke-width=\"" << num(s.width)
      << "\"" << (s.dash.empty() ? "" : " stroke-dasharray=\"" + s.dash + "\"") << "/>\n";
    if (s.markers)
      for (std::size_t k = 0; k < n; ++k)
        if (std::isfinite(s.y[k]))
          o << "<circle cx=\"" << num(f.px(s.x[k])) << "\" cy=\"" << num(f.py(s.y[k]))
            << "\" r=\"3.2\" fill=\"" << colour << "\" stroke=\"#fff\" stroke-width=\"0.8\"/>\n";
  }
  o << "</g>\n";
  for (const auto& n : c.notes) {
    const double x = f.px(n.x), y = f.py(n.y);
    o << "<circle cx=\"" << num(x) << "\" cy=\"" << num(y)
      << "\" r=\"5\" fill=\"none\" stroke=\"#222\" "
      << "stroke-width=\"1.5\"/>\n";
    const bool leftSide = x > (f.left + f.right) / 2;
    o << text(
        x + (leftSide ? -9 : 9), y - 8, n.label, leftSide ? "end" : "start",
        "font-size=\"12\" fill=\"#222\" stroke=\"#fff\" stroke-width=\"3\" paint-order=\"stroke\"");
  }
  if (!legend.empty() && c.legend != LineChart::LegendPlace::None) {
    const double w = legendWidth(legend), h = 8 + 18.0 * static_cast<double>(legend.size());
    double x = f.right - w - 8, y = f.top + 8;
    switch (c.legend) {
      case LineChart::LegendPlace::BottomRight:
        y = f.bottom - h - 8;
        break;
      case LineChart::LegendPlace::BottomLeft:
        x = f.left + 8, y = f.bottom - h - 8;
        break;
      case LineChart::LegendPlace::TopLeft:
        x = f.left + 8;
        break;
      case LineChart::LegendPlace::Right:
        x = f.right + 14;
        break;
      default:
        break;
    }
    o << legendBox(legend, x, y);
  }
  o << "</svg>\n";
  return o.str();
}

std::string render(const BarChart& c) {
  std::vector<LegendEntry> legend;
  for (std::size_t i = 0; i < c.seriesLabels.size(); ++i)
    legend.push_back({c.seriesLabels[i], paletteColour(i), "", true});
  Frame f;
  f.left = 74;
  f.top = c.title.empty() ? 16 : 40;
  f.right = c.width - (legend.empty() ? 20 : legendWidth(legend) + 24);
  f.bottom = c.height - 44;
  f.x = {0, static_cast<double>(std::max<std::size_t>(1, c.groups.size()))};
  f.y = {c.yMin, c.yMax};
  std::ostringstream o;
  o << header(c.width, c.height) << titleText(c.width, c.title);
  o << axes(f, {}, ticksFor({}, f.y, 5), true, "", c.yLabel);
  const double groupW = (f.right - f.left) / f.x.hi;
  const std::size_t nSeries = std::max<std::size_t>(1, c.seriesLabels.size());
  const double barW = groupW * 0.8 / static_cast<double>(nSeries);
  for (std::size_t g = 0; g < c.groups.size(); ++g) {
    const double gx = f.left + groupW * static_cast<double>(g);
    o << text(gx + groupW / 2, f.bottom + 20, c.groups[g].label, "middle", "font-size=\"13\"");
    for (std::size_t s = 0; s < c.groups[g].values.size(); ++s) {
      const double v = c.groups[g].values[s];
      if (!std::isfinite(v)) continue;
      const double x = gx + groupW * 0.1 + barW * static_cast<double>(s);
      const double y0 = f.py(std::max(c.yMin, 0.0)), y1 = f.py(std::clamp(v, c.yMin, c.yMax));
      o << "<rect x=\"" << num(x + 1) << "\" y=\"" << num(std::min(y0, y1)) << "\" width=\""
        << num(barW - 2) << "\" height=\"" << num(std::abs(y0 - y1)) << "\" fill=\""
        << paletteColour(s) << "\"/>\n";
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.*f", c.valueDecimals, v);
      o << text(x + barW / 2, std::min(y0, y1) - 5, buf, "middle", "font-size=\"11\"");
    }
  }
  o << legendBox(legend, f.right + 14, f.top + 8) << "</svg>\n";
  return o.str();
}

std::uint32_t divergingColour(double t) {
  // Anchors from dark blue through near-white to dark red, interpolated linearly.
  static const std::array<std::array<double, 3>, 5> anchors = {
      {{40, 90, 170}, {130, 175, 220}, {246, 246, 246}, {235, 140, 110}, {175, 30, 40}}};
  t = std::clamp(std::isfinite(t) ? t : 0.5, 0.0, 1.0) * 4.0;
  const std::size_t i = std::min<std::size_t>(3, static_cast<std::size_t>(t));
  const double u = t - static_cast<double>(i);
  std::uint32_t rgb = 0;
  for (int k = 0; k < 3; ++k) {
    const double v = anchors[i][k] * (1 - u) + anchors[i + 1][k] * u;
    rgb = (rgb << 8) | static_cast<std::uint32_t>(std::lround(v));
  }
  return rgb;
}

std::string render(const Heatmap& m, DocumentIds& ids) {
  Frame f;
  f.left = 74;
  f.top = m.title.empty() ? 16 : 40;
  f.right = m.width - 110;
  f.bottom = m.height - 52;
  const auto rows = static_cast<std::size_t>(m.values.rows()),
             cols = static_cast<std::size_t>(m.values.cols());
  f.x = {0, static_cast<double>(std::max<std::size_t>(1, cols))};
  f.y = {static_cast<double>(std::max<std::size_t>(1, rows)), 0};  // row 0 at the top
  std::vector<std::uint32_t> palette(256);
  for (std::size_t i = 0; i < 256; ++i)
    palette[i] = divergingColour(static_cast<double>(i) / 255.0);
  std::vector<std::uint8_t> pixels(rows * cols);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) {
      const double t =
          (m.values(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) - m.vMin) /
          (m.vMax - m.vMin);
      pixels[r * cols + c] = static_cast<std::uint8_t>(
          std::lround(std::clamp(std::isfinite(t) ? t : 0.5, 0.0, 1.0) * 255));
    }
  std::ostringstream o;
  o << header(m.width, m.height) << titleText(m.width, m.title);
  if (m.vectorCells) {
    const double cw = (f.right - f.left) / static_cast<double>(std::max<std::size_t>(1, cols)),
                 ch = (f.bottom - f.top) / static_cast<double>(std::max<std::size_t>(1, rows));
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c)
        o << "<rect x=\"" << num(f.left + static_cast<double>(c) * cw) << "\" y=\""
          << num(f.top + static_cast<double>(r) * ch) << "\" width=\"" << num(cw) << "\" height=\""
          << num(ch) << "\" fill=\"" << rgbHex(palette[pixels[r * cols + c]]) << "\"/>\n";
  } else {
    o << "<image x=\"" << num(f.left) << "\" y=\"" << num(f.top) << "\" width=\""
      << num(f.right - f.left) << "\" height=\"" << num(f.bottom - f.top)
      << "\" preserveAspectRatio=\"none\" "
      << "style=\"image-rendering:pixelated;image-rendering:crisp-edges\" "
         "href=\"data:image/png;base64,"
      << base64(pngIndexed(pixels, cols, rows, palette)) << "\"/>\n";
  }
  // Shift ticks to cell centres.
  auto centred = [](std::vector<Tick> t) {
    for (auto& k : t) k.value += 0.5;
    return t;
  };
  o << axes(f, centred(m.xTicks), centred(m.yTicks), false, m.xLabel, m.yLabel);
  // Colour bar: a gradient with the same anchors, ticks at nice values.
  const double bx = f.right + 22, bw = 16;
  const std::string gradient = "cbar" + std::to_string(++ids.gradients);
  o << "<linearGradient id=\"" << gradient << "\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">";
  for (int i = 0; i <= 16; ++i)
    o << "<stop offset=\"" << num(i / 16.0 * 100) << "%\" stop-color=\""
      << rgbHex(divergingColour(i / 16.0)) << "\"/>";
  o << "</linearGradient>\n<rect x=\"" << num(bx) << "\" y=\"" << num(f.top) << "\" width=\""
    << num(bw) << "\" height=\"" << num(f.bottom - f.top) << "\" fill=\"url(#" << gradient
    << ")\" stroke=\"#444\"/>\n";
  const AxisRange cr{m.vMin, m.vMax};
  for (double v : niceTicks(cr.lo, cr.hi, 4)) {
    const double y = f.bottom - (v - cr.lo) / (cr.hi - cr.lo) * (f.bottom - f.top);
    o << "<line x1=\"" << num(bx + bw) << "\" x2=\"" << num(bx + bw + 4) << "\" y1=\"" << num(y)
      << "\" y2=\"" << num(y) << "\" stroke=\"#444\"/>\n"
      << text(bx + bw + 7, y + 4, formatTick(v));
  }
  if (!m.colourLabel.empty()) {
    const double cx = bx + bw + 46, cy = (f.top + f.bottom) / 2;
    o << text(cx, cy, m.colourLabel, "middle",
              "font-size=\"13\" transform=\"rotate(-90 " + num(cx) + ' ' + num(cy) + ")\"");
  }
  o << "</svg>\n";
  return o.str();
}

namespace {

std::uint32_t crc32(const std::string& data, std::size_t from) {
  static const auto table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t n = 0; n < 256; ++n) {
      std::uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  std::uint32_t c = 0xFFFFFFFFu;
  for (std::size_t i = from; i < data.size(); ++i)
    c = table[(c ^ static_cast<unsigned char>(data[i])) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

void putBE32(std::string& s, std::uint32_t v) {
  for (int k = 3; k >= 0; --k) s += static_cast<char>((v >> (8 * k)) & 0xFF);
}

void chunk(std::string& png, const char* type, const std::string& data) {
  putBE32(png, static_cast<std::uint32_t>(data.size()));
  const std::size_t start = png.size();
  png += type;
  png += data;
  putBE32(png, crc32(png, start));
}

}  // namespace

std::string pngIndexed(const std::vector<std::uint8_t>& pixels, std::size_t width,
                       std::size_t height, const std::vector<std::uint32_t>& palette) {
  std::string png = "\x89PNG\r\n\x1a\n";
  std::string ihdr;
  putBE32(ihdr, static_cast<std::uint32_t>(width));
  putBE32(ihdr, static_cast<std::uint32_t>(height));
  ihdr +=
      std::string("\x08\x03\x00\x00\x00", 5);  // 8-bit palette, deflate, no filter, no interlace
  chunk(png, "IHDR", ihdr);
  std::string plte;
  for (std::uint32_t c : palette) {
    plte += static_cast<char>((c >> 16) & 0xFF);
    plte += static_cast<char>((c >> 8) & 0xFF);
    plte += static_cast<char>(c & 0xFF);
  }
  chunk(png, "PLTE", plte);
  std::string raw;  // scanlines, each with filter type 0
  raw.reserve(height * (width + 1));
  for (std::size_t r = 0; r < height; ++r) {
    raw += '\0';
    raw.append(reinterpret_cast<const char*>(pixels.data() + r * width), width);
  }
  // zlib stream of stored (uncompressed) deflate blocks, then Adler-32.
  std::string z = "\x78\x01";
  std::size_t pos = 0;
  do {
    const std::size_t len = std::min<std::size_t>(65535, raw.size() - pos);
    const bool last = pos + len == raw.size();
    z += static_cast<char>(last ? 1 : 0);
    z += static_cast<char>(len & 0xFF);
    z += static_cast<char>(len >> 8);
    z += static_cast<char>(~len & 0xFF);
    z += static_cast<char>((~len >> 8) & 0xFF);
    z.append(raw, pos, len);
    pos += len;
  } while (pos < raw.size());
  std::uint32_t a = 1, b = 0;
  for (unsigned char ch : raw) a = (a + ch) % 65521, b = (b + a) % 65521;
  putBE32(z, (b << 16) | a);
  chunk(png, "IDAT", z);
  chunk(png, "IEND", "");
  return png;
}

std::string base64(const std::string& bytes) {
  static const char* table = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const std::uint32_t v = (static_cast<unsigned char>(bytes[i]) << 16) |
                            (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                            static_cast<unsigned char>(bytes[i + 2]);
    for (int k = 3; k >= 0; --k) out += table[(v >> (6 * k)) & 63];
  }
  if (i < bytes.size()) {
    std::uint32_t v = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += table[(v >> 18) & 63];
    out += table[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? table[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

}  // namespace posvec::detail::svg
