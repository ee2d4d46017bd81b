// Test-only reading of the report's SVG text: elements and their attributes, the
// points of a path, and the pixel-to-value mapping an axis's tick labels define.
// It parses the text the renderer wrote, so a test can check a figure for what
// it shows without calling the renderer's own mapping.
#pragma once

#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace posvec::test::svgread {

struct Element {
  std::map<std::string, std::string> attrs;
  std::string text;  // content up to the next '<' (for <text>)
  bool has(const std::string& k) const { return attrs.count(k) != 0; }
  std::string get(const std::string& k) const {
    const auto it = attrs.find(k);
    return it == attrs.end() ? std::string() : it->second;
  }
  double num(const std::string& k) const { return std::strtod(get(k).c_str(), nullptr); }
};

// Every <tag ...> of the document, in document order.
inline std::vector<Element> elements(const std::string& svg, const std::string& tag) {
  std::vector<Element> out;
  const std::string open = "<" + tag + " ";
  for (auto at = svg.find(open); at != std::string::npos; at = svg.find(open, at + 1)) {
    Element e;
    std::size_t i = at + open.size();
    while (i < svg.size() && svg[i] != '>') {
      while (i < svg.size() && svg[i] == ' ') ++i;
      const auto eq = svg.find('=', i);
      if (eq == std::string::npos || svg[i] == '/' || svg[i] == '>') break;
      const std::string name = svg.substr(i, eq - i);
      const char q = svg[eq + 1];
      const auto end = svg.find(q, eq + 2);
      e.attrs[name] = svg.substr(eq + 2, end - eq - 2);
      i = end + 1;
    }
    if (i < svg.size() && svg[i] == '>') e.text = svg.substr(i + 1, svg.find('<', i) - i - 1);
    out.push_back(std::move(e));
  }
  return out;
}

// The points of a path's "M x y L x y ..." data (H segments of step plots skipped).
inline std::vector<std::pair<double, double>> pathPoints(const std::string& d) {
  std::vector<std::pair<double, double>> out;
  std::istringstream in(d);
  std::string cmd;
  while (in >> cmd) {
    if (cmd[0] == 'H') continue;
    const double x = std::strtod(cmd.c_str() + 1, nullptr);
    double y = 0;
    in >> y;
    out.emplace_back(x, y);
  }
  return out;
}

// A linear pixel → value map fitted through the first and last labelled tick.
struct AxisMap {
  double p0 = 0, v0 = 0, p1 = 1, v1 = 1;
  double value(double px) const { return v0 + (px - p0) * (v1 - v0) / (p1 - p0); }
  double unitsPerPx() const { return std::abs((v1 - v0) / (p1 - p0)); }
};

// The plot frame: the rect drawn with fill="none" stroke="#444".
inline Element frame(const std::string& svg) {
  for (const auto& r : elements(svg, "rect"))
    if (r.get("fill") == "none" && r.get("stroke") == "#444") return r;
  return {};
}

// Tick labels: x ticks are centred 18 px under the frame, y ticks end 8 px left of it
// (the label sits 4 px below the tick's pixel).
struct Ticks {
  std::vector<std::pair<double, std::string>> x, y;  // pixel, label
};
inline Ticks ticks(const std::string& svg) {
  const Element f = frame(svg);
  const double left = f.num("x"), bottom = f.num("y") + f.num("height");
  Ticks t;
  for (const auto& e : elements(svg, "text")) {
    if (e.get("fill") != "#333") continue;
    if (e.get("text-anchor") == "middle" && std::abs(e.num("y") - (bottom + 18)) < 0.11)
      t.x.emplace_back(e.num("x"), e.text);
    else if (e.get("text-anchor") == "end" && std::abs(e.num("x") - (left - 8)) < 0.11)
      t.y.emplace_back(e.num("y") - 4, e.text);
  }
  return t;
}

inline AxisMap axisMap(const std::vector<std::pair<double, std::string>>& t) {
  AxisMap m;
  if (t.size() < 2) return m;
  m.p0 = t.front().first;
  m.v0 = std::strtod(t.front().second.c_str(), nullptr);
  m.p1 = t.back().first;
  m.v1 = std::strtod(t.back().second.c_str(), nullptr);
  return m;
}

}  // namespace posvec::test::svgread
