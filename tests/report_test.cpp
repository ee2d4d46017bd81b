#include "posvec/report.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <thread>

#include "posvec/error.hpp"
#include "svg.hpp"
#include "svg_reading.hpp"
#include "test_util.hpp"

using namespace posvec;
using nlohmann::json;

namespace {

// Well-formedness of an XML document: tags nest and close, attributes are quoted,
// entities are the five XML ones or numeric. Returns "" or what is wrong.
std::string xmlProblem(const std::string& s) {
  std::vector<std::string> stack;
  std::size_t i = 0;
  int roots = 0;
  while (i < s.size()) {
    if (s[i] == '&') {
      const auto semi = s.find(';', i);
      if (semi == std::string::npos) return "unterminated entity";
      const std::string ent = s.substr(i + 1, semi - i - 1);
      if (ent != "amp" && ent != "lt" && ent != "gt" && ent != "quot" && ent != "apos" &&
          (ent.empty() || ent[0] != '#'))
        return "unknown entity &" + ent + ";";
      i = semi + 1;
      continue;
    }
    if (s[i] != '<') {
      ++i;
      continue;
    }
    if (s.compare(i, 4, "<!--") == 0) {
      const auto end = s.find("-->", i);
      if (end == std::string::npos) return "unterminated comment";
      i = end + 3;
      continue;
    }
    if (s.compare(i, 2, "<?") == 0) {
      i = s.find("?>", i) + 2;
      continue;
    }
    std::size_t j = i + 1;
    const bool closing = s[j] == '/';
    if (closing) ++j;
    std::size_t k = j;
    while (k < s.size() && !std::isspace(static_cast<unsigned char>(s[k])) && s[k] != '>' &&
           s[k] != '/')
      ++k;
    const std::string name = s.substr(j, k - j);
    if (name.empty()) return "empty tag name at " + std::to_string(i);
    // Attributes: name="value" pairs until > or />.
    char quote = 0;
    for (; k < s.size(); ++k) {
      if (quote) {
        if (s[k] == quote)
          quote = 0;
        else if (s[k] == '<')
          return "'<' inside an attribute of <" + name + ">";
      } else if (s[k] == '"' || s[k] == '\'') {
        quote = s[k];
      } else if (s[k] == '>') {
        break;
      }
    }
    if (k >= s.size()) return "unterminated tag <" + name;
    const bool selfClosing = s[k - 1] == '/';
    if (closing) {
      if (stack.empty() || stack.back() != name)
        return "</" + name + "> closes " + (stack.empty() ? "nothing" : "<" + stack.back() + ">");
      stack.pop_back();
    } else if (!selfClosing) {
      if (stack.empty()) ++roots;
      stack.push_back(name);
    } else if (stack.empty()) {
      ++roots;
    }
    i = k + 1;
  }
  if (!stack.empty()) return "<" + stack.back() + "> is never closed";
  if (roots != 1) return std::to_string(roots) + " root elements";
  return "";
}

Embeddings randomEmbeddings(std::size_t d, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0, 1);
  MatrixF m(2, static_cast<Eigen::Index>(d));
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = n(rng);
  return Embeddings({"black", "brown"}, m);
}

// The 64-d vectors of smallResults(): row 0 "black", row 1 "brown".
const Embeddings& studyVectors() {
  static const Embeddings e = randomEmbeddings(64, 4);
  return e;
}

StudyResults smallResults() {
  static const Embeddings e32 = randomEmbeddings(32, 5);
  const Embeddings& e = studyVectors();
  ExperimentOptions o;
  o.first = {"black", 2};
  o.second = {"brown", 10};
  o.encodings = {Encoding::Book, Encoding::Interleaved};
  o.profileLength = 256;
  o.profilePosition = 100;
  o.heatmapPositions = 40;
  StudyResults r;
  r.words = {o.first, o.second};
  r.encodings = o.encodings;
  r.pairs = studySimilarities(e, r.words, r.encodings, Scale{});
  r.experiments = positionalExperiments(e, o, {&e32});
  r.settings.source = "in-memory test vectors";
  r.settings.dim = e.dim();
  r.settings.base = o.base;
  r.settings.scale = Scale{}.factor(e.dim());
  r.settings.scaleName = scaleLabel(r.settings.scale, e.dim());
  r.settings.vocabulary = e.size();
  r.training.push_back({1, 0.5, 10, 100, 0.99, {0.9, 0.8}});
  r.training.push_back({5, 0.5, 10, 100, 0.95, {0.85, 0.75}});
  r.training.push_back({1, 1.0, 20, 200, 0.98, {0.88, 0.78}});
  r.training.push_back({5, 1.0, 20, 200, std::nan(""), {std::nan(""), std::nan("")}});
  return r;
}

// Independent references, in double, straight from the formulas in positional.hpp:
// interleaved PE[p,2k] = sin(p / base^(2k/d)), PE[p,2k+1] = cos(same); the book loop
// gives column i (even) the angle p / base^(2i/d), sin at i and cos at i+1.
double peValue(Encoding enc, std::int64_t p, std::size_t col, std::size_t d, double base) {
  const std::size_t even = col - col % 2;
  const double expo =
      (enc == Encoding::Book ? 2.0 * static_cast<double>(even) : static_cast<double>(even)) /
      static_cast<double>(d);
  const double angle = static_cast<double>(p) / std::pow(base, expo);
  return col % 2 ? std::cos(angle) : std::sin(angle);
}

// The transformer input x = e·scale + PE[p] of vector row `row`, in double.
std::vector<double> inputRow(std::size_t row, std::int64_t p, Encoding enc, double scale) {
  const Embeddings& e = studyVectors();
  const std::size_t d = e.dim();
  std::vector<double> x(d);
  for (std::size_t c = 0; c < d; ++c)
    x[c] = scale * static_cast<double>(
                       e.vectors()(static_cast<Eigen::Index>(row), static_cast<Eigen::Index>(c))) +
           peValue(enc, p, c, d, 10000);
  return x;
}

double cosine(const std::vector<double>& a, const std::vector<double>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    ab += a[i] * b[i], aa += a[i] * a[i], bb += b[i] * b[i];
  return ab / std::sqrt(aa * bb);
}

// peCosineClosedForm's exponent scale: pair k turns at base^(-scale·k/d), so 2 for
// interleaved (2k/d) and 4 for book (column i = 2k uses 2i/d = 4k/d).
constexpr int kInterleavedExponent = 2, kBookExponent = 4;

// What smallResults() places: black at 2, brown at 10, √d = 8 for the 64-d vectors.
constexpr std::int64_t kFirstAt = 2, kSecondAt = 10;
const double kRootD = std::sqrt(64.0);

// cos(e_black, e_brown) in double: the word term with no positions.
double refWordSimilarity() {
  const auto& m = studyVectors().vectors();
  std::vector<double> a, b;
  for (Eigen::Index c = 0; c < m.cols(); ++c) a.push_back(m(0, c)), b.push_back(m(1, c));
  return cosine(a, b);
}

double refCombined(Encoding enc, double scale, std::int64_t pa, std::int64_t pb) {
  return cosine(inputRow(0, pa, enc, scale), inputRow(1, pb, enc, scale));
}

// The scale a curve label names ("book, scale 2 sqrt(d)"), for the 64-d vectors.
double labelScale(const std::string& label) {
  const std::string s = label.substr(label.find("scale ") + 6);
  if (s == "1") return 1;
  if (s == "sqrt(d)") return kRootD;
  if (s == "2 sqrt(d)") return 2 * kRootD;
  FAIL("unexpected scale in curve label '" << label << "'");
  return 0;
}

Encoding labelEncoding(const std::string& label) {
  return label.rfind("book", 0) == 0 ? Encoding::Book : Encoding::Interleaved;
}

}  // namespace

TEST_CASE("report: the XML checker itself accepts good and refuses bad documents", "[report]") {
  CHECK(xmlProblem("<svg a=\"1\"><g><rect/></g><text>a &amp; b</text></svg>").empty());
  CHECK_FALSE(xmlProblem("<svg><g></svg>").empty());
  CHECK_FALSE(xmlProblem("<svg>a & b</svg>").empty());
  CHECK_FALSE(xmlProblem("<svg a=\"<\"></svg>").empty());
}

TEST_CASE("report: PNG and base64 encoders produce valid data", "[report]") {
  namespace svg = detail::svg;
  CHECK(svg::base64("Man") == "TWFu");
  CHECK(svg::base64("Ma") == "TWE=");
  CHECK(svg::base64("M") == "TQ==");
  const std::string png =
      svg::pngIndexed({0, 1, 2, 3}, 2, 2, {0xff0000, 0x00ff00, 0x0000ff, 0xffffff});
  CHECK(png.substr(1, 3) == "PNG");
  CHECK(png.substr(12, 4) == "IHDR");
  CHECK(png.compare(png.size() - 8, 4, "IEND") == 0);
  // Every PNG ends with the CRC-32 of "IEND", the constant AE 42 60 82.
  CHECK(png.substr(png.size() - 4) == std::string("\xAE\x42\x60\x82", 4));
  const auto ticks = svg::niceTicks(0, 1, 5);
  REQUIRE(ticks.size() == 6);
  CHECK(ticks[3] == Approx(0.6));
  CHECK(svg::niceTicks(0, 2047, 8).back() == Approx(2000));
}

// The figures studyFigures() documents (report.hpp) for these results, in page
// order: one per section of the page (the study's bar chart, the interleaved
// columns, a heatmap per layout, binary counting, the distance profile, same
// token, combined versus distance, the decomposition), the training figure only
// when the sweep ran, and one per attention map.
std::vector<std::string> expectedFigureFiles(const StudyResults& r) {
  std::vector<std::string> files = {
      "study-similarities.svg", "pe-columns.svg",           "pe-heatmap-interleaved.svg",
      "pe-heatmap-book.svg",    "binary-counting.svg",      "distance-profile.svg",
      "same-token.svg",         "combined-vs-distance.svg", "decomposition.svg"};
  if (!r.training.empty()) files.push_back("training.svg");
  for (const auto& m : r.attention.maps) files.push_back(m.key + ".svg");
  return files;
}

TEST_CASE("report: files exist, SVGs are well-formed XML, one figure per documented section",
          "[report]") {
  const StudyResults r = smallResults();
  test::TempDir tmp;
  const std::string dir = tmp.file("report");
  writeReport(r, dir);
  const auto figures = studyFigures(r);
  std::vector<std::string> files;
  for (const auto& f : figures) files.push_back(f.file);
  CHECK(files == expectedFigureFiles(r));
  StudyResults noSweep = r;
  noSweep.training.clear();
  CHECK(studyFigures(noSweep).size() == expectedFigureFiles(noSweep).size());
  for (const auto& f : figures) {
    INFO(f.file);
    const std::string path = dir + "/" + f.file;
    REQUIRE(std::filesystem::exists(path));
    const std::string text = test::readText(path);
    CHECK(text == f.svg);
    CHECK(xmlProblem(text).empty());
    INFO(xmlProblem(text));
    CHECK(text.rfind("<svg", 0) == 0);
    CHECK(text.find("NaN") == std::string::npos);
    CHECK(text.find("nan") == std::string::npos);
  }
  const std::string html = test::readText(dir + "/index.html");
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("http://") == html.find("http://www.w3.org/2000/svg"));  // only the SVG namespace
  std::size_t inlineSvgs = 0;
  for (auto at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1))
    ++inlineSvgs;
  CHECK(inlineSvgs == expectedFigureFiles(r).size());
}

TEST_CASE("report: results.json values equal a double computation from the vectors", "[report]") {
  const StudyResults r = smallResults();
  test::TempDir tmp;
  const std::string dir = tmp.file("report");
  writeReport(r, dir);
  const json j = json::parse(test::readText(dir + "/results.json"));
  // Both positional cosines depend only on the distance 10 - 2 = 8.
  const double bookPos = test::peCosineClosedForm(kSecondAt - kFirstAt, 64, kBookExponent);
  const double interPos = test::peCosineClosedForm(kSecondAt - kFirstAt, 64, kInterleavedExponent);
  const double eps = 1e-9;
  CHECK(j["word_similarity"].get<double>() == Approx(refWordSimilarity()).margin(1e-6));
  CHECK(j["positional_similarity"].get<double>() == Approx(bookPos).margin(eps));
  CHECK(j["combined_similarity"].get<double>() ==
        Approx(refCombined(Encoding::Book, kRootD, kFirstAt, kSecondAt)).margin(1e-6));
  REQUIRE(j["pairs"].size() == r.words.size() * (r.words.size() - 1) / 2 * r.encodings.size());
  CHECK(j["pairs"][1]["encoding"] == "interleaved");
  CHECK(j["pairs"][1]["positional_similarity"].get<double>() == Approx(interPos).margin(eps));
  CHECK(j["pairs"][1]["combined_similarity"].get<double>() ==
        Approx(refCombined(Encoding::Interleaved, kRootD, kFirstAt, kSecondAt)).margin(1e-6));
  CHECK(j["pairs"][1]["word_similarity"].get<double>() == Approx(refWordSimilarity()).margin(1e-6));

  // Distance profile around p = 100: cos(PE[100], PE[q]) is the closed form at q - 100.
  const auto& prof = j["distance_profile"];
  CHECK(prof["position"] == 100);
  for (const auto& c : prof["curves"]) {
    const int scale = c["label"] == "book" ? kBookExponent : kInterleavedExponent;
    const auto v = c["values"].get<std::vector<double>>();
    CHECK(v.size() == 256);
    for (std::size_t q = 0; q < v.size(); ++q) {
      INFO(c["label"] << " q=" << q);
      CHECK(
          v[q] ==
          Approx(test::peCosineClosedForm(static_cast<long long>(q) - 100, 64, scale)).margin(eps));
    }
  }
  // Same token: cos(x_0, x_k) with x_k = e_black·s + PE[k].
  for (const auto& c : j["same_token"]["curves"]) {
    const std::string label = c["label"];
    const double s = labelScale(label);
    const Encoding enc = labelEncoding(label);
    const auto v = c["values"].get<std::vector<double>>();
    const auto x0 = inputRow(0, 0, enc, s);
    for (std::size_t k : {std::size_t{0}, std::size_t{1}, std::size_t{7}, v.size() - 1}) {
      INFO(label << " k=" << k);
      CHECK(v[k] ==
            Approx(cosine(x0, inputRow(0, static_cast<std::int64_t>(k), enc, s))).margin(1e-6));
    }
  }
  // Combined versus distance: brown at 2 + k.
  for (const auto& c : j["combined_by_distance"]["curves"]) {
    const std::string label = c["label"];
    const auto v = c["values"].get<std::vector<double>>();
    for (std::size_t k : {std::size_t{0}, std::size_t{8}, v.size() - 1}) {
      INFO(label << " k=" << k);
      CHECK(v[k] == Approx(refCombined(labelEncoding(label), labelScale(label), kFirstAt,
                                       kFirstAt + static_cast<std::int64_t>(k)))
                        .margin(1e-6));
    }
  }
  // The plotted PE columns, value by value from the interleaved formula.
  for (const auto& [col, values] : j["pe_matrix"]["interleaved_columns"].items()) {
    const auto v = values.get<std::vector<double>>();
    CHECK(v.size() == 40);  // heatmapPositions in smallResults()
    for (std::size_t p = 0; p < v.size(); ++p)
      CHECK(v[p] == Approx(peValue(Encoding::Interleaved, static_cast<std::int64_t>(p),
                                   std::stoul(col), 64, 10000))
                        .margin(1e-12));
  }
  // Binary counting: bit k of p.
  const auto bits = j["binary_counting"]["bits"];
  for (std::size_t p = 0; p < bits.size(); ++p)
    for (std::size_t k = 0; k < bits[p].size(); ++k)
      CHECK(bits[p][k].get<double>() == static_cast<double>((p >> k) & 1u));
  // Decomposition rows of the 64-d vectors: the three similarities by definition.
  std::size_t checked = 0;
  for (const auto& d : j["decomposition"]) {
    if (d["dim"] != 64) continue;
    ++checked;
    const Encoding enc = labelEncoding(d["encoding"]);
    const double s = d["scale_factor"];
    INFO(d["encoding"] << " scale " << s);
    CHECK(d["positional_similarity"].get<double>() ==
          Approx(test::peCosineClosedForm(
                     8, 64, enc == Encoding::Book ? kBookExponent : kInterleavedExponent))
              .margin(eps));
    CHECK(d["word_similarity"].get<double>() == Approx(refWordSimilarity()).margin(1e-6));
    CHECK(d["combined_similarity"].get<double>() ==
          Approx(refCombined(enc, s, kFirstAt, kSecondAt)).margin(1e-6));
  }
  CHECK(checked == 2 * 4);  // 2 encodings × decompositionScales() {0, 1, √d, 2√d}
  // Training points are inputs of the report: passed through as given, NaN as null.
  CHECK(j["training"][1]["combined_book"] == 0.85);
  CHECK(j["training"][3]["word_similarity"].is_null());
}

namespace {

namespace sr = test::svgread;

const Figure& figureNamed(const std::vector<Figure>& figures, const std::string& file) {
  for (const auto& f : figures)
    if (f.file == file) return f;
  FAIL("no figure " << file);
  return figures.front();
}

}  // namespace

TEST_CASE("report: the distance profile draws the data's range and its values", "[report]") {
  const StudyResults r = smallResults();
  const auto figures = studyFigures(r);
  const std::string svg = figureNamed(figures, "distance-profile.svg").svg;
  const sr::Element frame = sr::frame(svg);
  REQUIRE(frame.has("x"));
  const double left = frame.num("x"), top = frame.num("y");
  const double right = left + frame.num("width"), bottom = top + frame.num("height");
  const sr::Ticks t = sr::ticks(svg);
  REQUIRE(t.x.size() >= 2);
  REQUIRE(t.y.size() >= 2);
  const sr::AxisMap xm = sr::axisMap(t.x), ym = sr::axisMap(t.y);
  // Coordinates are written with one decimal (±0.05 px), the ticks' too: allow
  // 0.2 px through each axis map.
  const double xTol = 0.2 * xm.unitsPerPx(), yTol = 0.2 * ym.unitsPerPx();
  // x: positions 0..255 (profileLength 256), edge to edge.
  CHECK(xm.value(left) == Approx(0).margin(xTol));
  CHECK(xm.value(right) == Approx(255).margin(xTol));
  // y: from -1 when some cosine is negative (else 0) to above the peak of 1.
  double lo = 1;
  for (long long q = 0; q < 256; ++q)
    lo = std::min({lo, test::peCosineClosedForm(q - 100, 64, kBookExponent),
                   test::peCosineClosedForm(q - 100, 64, kInterleavedExponent)});
  CHECK(ym.value(bottom) == Approx(lo < 0 ? -1.0 : 0.0).margin(yTol));
  CHECK(ym.value(top) > 1);
  CHECK(std::stod(t.y.front().second) == Approx(lo < 0 ? -1.0 : 0.0));
  CHECK(std::stod(t.y.back().second) == Approx(1.0));
  // The note rings the peak at q = p = 100, cosine 1.
  const auto circles = sr::elements(svg, "circle");
  bool ringed = false;
  for (const auto& c : circles)
    if (c.get("r") == "5")
      ringed = std::abs(xm.value(c.num("cx")) - 100) < xTol &&
               std::abs(ym.value(c.num("cy")) - 1) < yTol;
  CHECK(ringed);
  // The curves: first book (legend order follows r.experiments.profiles), then interleaved.
  std::vector<std::vector<std::pair<double, double>>> curves;
  for (const auto& p : sr::elements(svg, "path")) curves.push_back(sr::pathPoints(p.get("d")));
  REQUIRE(curves.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    REQUIRE(curves[i].size() == 256);
    for (std::size_t q : {0, 37, 99, 100, 101, 180, 255}) {
      INFO("curve " << i << " q=" << q);
      const double expected = test::peCosineClosedForm(
          static_cast<long long>(q) - 100, 64, i == 0 ? kBookExponent : kInterleavedExponent);
      CHECK(xm.value(curves[i][q].first) == Approx(static_cast<double>(q)).margin(xTol));
      CHECK(ym.value(curves[i][q].second) == Approx(expected).margin(yTol));
    }
  }
}

TEST_CASE("report: the distance profile's y axis reaches -1 when a cosine is negative",
          "[report]") {
  // At d = 64 both profiles of smallResults() stay >= 0 over q = 0..255, so the
  // test above sees the 0 floor only: give one curve a negative value (larger
  // dimensions do dip below 0) and read the axis and that point back.
  StudyResults r = smallResults();
  auto& values = r.experiments.profiles.back().values;
  values[30] = -0.25;
  const std::string svg = figureNamed(studyFigures(r), "distance-profile.svg").svg;
  const sr::Element frame = sr::frame(svg);
  const double bottom = frame.num("y") + frame.num("height");
  const sr::Ticks t = sr::ticks(svg);
  const sr::AxisMap xm = sr::axisMap(t.x), ym = sr::axisMap(t.y);
  const double xTol = 0.2 * xm.unitsPerPx(), yTol = 0.2 * ym.unitsPerPx();
  CHECK(ym.value(bottom) == Approx(-1).margin(yTol));
  CHECK(std::stod(t.y.front().second) == Approx(-1));
  const auto paths = sr::elements(svg, "path");
  REQUIRE(paths.size() == 2);
  const auto points = sr::pathPoints(paths.back().get("d"));
  REQUIRE(points.size() == values.size());
  CHECK(xm.value(points[30].first) == Approx(30).margin(xTol));
  CHECK(ym.value(points[30].second) == Approx(-0.25).margin(yTol));
}

TEST_CASE("report: the columns figure marks the sentence's words and plots PE", "[report]") {
  const StudyResults r = smallResults();
  const auto figures = studyFigures(r);
  const Figure& fig = figureNamed(figures, "pe-columns.svg");
  const std::string& svg = fig.svg;
  const sr::Element frame = sr::frame(svg);
  const double left = frame.num("x"), top = frame.num("y");
  const double right = left + frame.num("width"), bottom = top + frame.num("height");
  const sr::Ticks t = sr::ticks(svg);
  REQUIRE(t.x.size() >= 2);
  REQUIRE(t.y.size() >= 2);
  const sr::AxisMap xm = sr::axisMap(t.x), ym = sr::axisMap(t.y);
  const double xTol = 0.2 * xm.unitsPerPx(), yTol = 0.2 * ym.unitsPerPx();
  // The caption claims positions 0–N: the x axis spans exactly that, and N leaves
  // room for the whole sentence (its last word, the full stop, sits at 16).
  const std::string dashTo = "positions 0\u2013";
  const auto at = fig.caption.find(dashTo);
  REQUIRE(at != std::string::npos);
  const double last = std::stod(fig.caption.substr(at + dashTo.size()));
  CHECK(last >= 16);
  CHECK(xm.value(left) == Approx(0).margin(xTol));
  CHECK(xm.value(right) == Approx(last).margin(xTol));
  // Sinusoids stay in [-1, 1]: the y axis holds the whole range.
  CHECK(ym.value(bottom) < -1);
  CHECK(ym.value(top) > 1);
  // Every word of the sentence labelled above its 1-based position, the study's
  // pair (black at 2, brown at 10) and only it in red.
  const std::vector<std::string> sentence = {"the",   "black", "cat", "sat",   "on",  "the",
                                             "couch", "and",   "the", "brown", "dog", "slept",
                                             "on",    "the",   "rug", "."};
  std::vector<sr::Element> labels;
  for (const auto& e : sr::elements(svg, "text"))
    if (e.get("font-size") == "11") labels.push_back(e);
  REQUIRE(labels.size() == sentence.size());
  std::vector<std::pair<std::string, double>> red;
  for (std::size_t p = 0; p < sentence.size(); ++p) {
    INFO("word " << p + 1);
    CHECK(labels[p].text == sentence[p]);
    CHECK(xm.value(labels[p].num("x")) == Approx(static_cast<double>(p + 1)).margin(xTol));
    if (labels[p].get("fill") == "#b00020")
      red.emplace_back(labels[p].text, xm.value(labels[p].num("x")));
  }
  REQUIRE(red.size() == 2);
  CHECK(red[0].first == "black");
  CHECK(red[0].second == Approx(kFirstAt).margin(xTol));
  CHECK(red[1].first == "brown");
  CHECK(red[1].second == Approx(kSecondAt).margin(xTol));
  // The dots: one per integer position per plotted column, in series order.
  const auto dots = [&] {
    std::vector<sr::Element> out;
    for (const auto& c : sr::elements(svg, "circle"))
      if (c.get("r") == "3.2") out.push_back(c);
    return out;
  }();
  const auto n = static_cast<std::size_t>(last) + 1;
  const std::vector<std::size_t> columns = {0, 32};  // {0, 32, 64, 128} below d = 64
  REQUIRE(dots.size() == columns.size() * n);
  for (std::size_t i = 0; i < columns.size(); ++i)
    for (std::size_t p : {std::size_t{1}, std::size_t{2}, std::size_t{5}, std::size_t{10}, n - 1}) {
      INFO("column " << columns[i] << " position " << p);
      const auto& dot = dots[i * n + p];
      CHECK(xm.value(dot.num("cx")) == Approx(static_cast<double>(p)).margin(xTol));
      CHECK(ym.value(dot.num("cy")) ==
            Approx(
                peValue(Encoding::Interleaved, static_cast<std::int64_t>(p), columns[i], 64, 10000))
                .margin(yTol));
    }
}

TEST_CASE("report: the study bar chart shows the pair's three similarities", "[report]") {
  const StudyResults r = smallResults();
  const std::string svg = figureNamed(studyFigures(r), "study-similarities.svg").svg;
  const sr::AxisMap ym = sr::axisMap(sr::ticks(svg).y);
  const double yTol = 0.2 * ym.unitsPerPx();
  // Bars in group order: book (word, positional, combined), interleaved, then the
  // published group; the value is printed above each bar with four decimals.
  const std::vector<double> expected = {
      refWordSimilarity(),
      test::peCosineClosedForm(8, 64, kBookExponent),
      refCombined(Encoding::Book, kRootD, kFirstAt, kSecondAt),
      refWordSimilarity(),
      test::peCosineClosedForm(8, 64, kInterleavedExponent),
      refCombined(Encoding::Interleaved, kRootD, kFirstAt, kSecondAt)};
  std::vector<sr::Element> bars;
  for (const auto& e : sr::elements(svg, "rect"))
    if (e.get("fill").rfind("#", 0) == 0 && e.get("fill") != "#ffffff")
      bars.push_back(e);  // the bars, then the legend's colour boxes
  std::vector<sr::Element> values;
  for (const auto& e : sr::elements(svg, "text"))
    if (e.get("font-size") == "11") values.push_back(e);
  REQUIRE(bars.size() >= expected.size());
  REQUIRE(values.size() >= expected.size());
  // A bar spans from 0 to its value, whichever side of 0 that is.
  for (std::size_t i = 0; i < expected.size(); ++i) {
    INFO("bar " << i);
    CHECK(std::stod(values[i].text) == Approx(expected[i]).margin(0.5e-4));
    CHECK(ym.value(bars[i].num("y")) == Approx(std::max(expected[i], 0.0)).margin(yTol));
    CHECK(ym.value(bars[i].num("y") + bars[i].num("height")) ==
          Approx(std::min(expected[i], 0.0)).margin(yTol));
  }
}

TEST_CASE("report: the text table and the summary JSON", "[report]") {
  const StudyResults r = smallResults();
  const std::string table = studyTable(r);
  // The row of each pair: word, positional and combined with seven decimals.
  for (const auto& [enc, name] : {std::pair{Encoding::Book, std::string("book")},
                                  std::pair{Encoding::Interleaved, std::string("interleaved")}}) {
    INFO(name);
    const std::string head = "black:2 ~ brown:10  " + name;
    const auto row = table.find(head);
    REQUIRE(row != std::string::npos);
    std::istringstream in(table.substr(row + head.size()));
    double w = 0, p = 0, c = 0;
    in >> w >> p >> c;
    const double half = 0.5e-7 + 1e-12;  // printed with seven decimals
    CHECK(w == Approx(refWordSimilarity()).margin(half + 1e-6));
    CHECK(p == Approx(test::peCosineClosedForm(
                          8, 64, enc == Encoding::Book ? kBookExponent : kInterleavedExponent))
                   .margin(half));
    CHECK(c == Approx(refCombined(enc, kRootD, kFirstAt, kSecondAt)).margin(half + 1e-6));
  }
  // The study published the positional value of its book loop at d_model = 512 (its
  // word2vec size), cos(PE_book[2], PE_book[10]): the closed form gives it
  // independently of the report's constant.
  const auto published = table.find("study's published values");
  REQUIRE(published != std::string::npos);
  char pos[40];
  std::snprintf(pos, sizeof pos, "positional %.7f",
                test::peCosineClosedForm(8, 512, kBookExponent));
  CHECK(table.find(pos, published) != std::string::npos);
  const json j = json::parse(summaryJson(r));
  CHECK(j["word_similarity"].get<double>() == Approx(refWordSimilarity()).margin(1e-6));
  CHECK(j["positional_similarity"].get<double>() ==
        Approx(test::peCosineClosedForm(8, 64, kBookExponent)).margin(1e-9));
  CHECK(j["combined_similarity"].get<double>() ==
        Approx(refCombined(Encoding::Book, kRootD, kFirstAt, kSecondAt)).margin(1e-6));
  CHECK(j["a"] == "black:2");
  CHECK(j["b"] == "brown:10");
  CHECK(j["settings"]["dim"] == 64);
  CHECK(j["settings"]["scale_factor"].get<double>() == kRootD);
  CHECK(j["pairs"].size() == r.encodings.size());  // one pair of words × each encoding
}

TEST_CASE("report: pages rendered in parallel threads equal pages rendered in turn", "[report]") {
  const StudyResults r = smallResults();
  auto page = [&r] {
    const auto figures = studyFigures(r);
    std::string all = reportHtml(r, figures);
    for (const auto& f : figures) all += f.svg;
    return all;
  };
  const std::string first = page(), second = page();
  CHECK(first == second);  // no state carried from one page to the next
  std::string a, b;
  std::thread ta([&] { a = page(); }), tb([&] { b = page(); });
  ta.join();
  tb.join();
  CHECK(a == first);
  CHECK(b == first);
  // Within one page the inlined figures' ids stay distinct.
  const std::string html = reportHtml(r, studyFigures(r));
  std::vector<std::string> ids;
  for (auto at = html.find(" id=\""); at != std::string::npos; at = html.find(" id=\"", at + 1))
    ids.push_back(html.substr(at + 5, html.find('"', at + 5) - at - 5));
  std::sort(ids.begin(), ids.end());
  CHECK(std::adjacent_find(ids.begin(), ids.end()) == ids.end());
  CHECK(std::count(ids.begin(), ids.end(), "cbar2") == 1);
}

TEST_CASE("report: captions and curves follow the base and the encodings", "[report]") {
  StudyResults r = smallResults();
  r.settings.base = 250;
  r.encodings = {Encoding::Interleaved, Encoding::Concatenated};
  for (auto* curves : {&r.experiments.sameToken, &r.experiments.combinedByDistance})
    for (auto& c : *curves)
      c.encoding = c.encoding == Encoding::Book ? Encoding::Interleaved : Encoding::Concatenated;
  const auto figures = studyFigures(r);
  std::string captions;
  for (const auto& f : figures) captions += f.caption + "\n";
  CHECK(captions.find("10000") == std::string::npos);
  CHECK(captions.find("sin(p / 250^(2k/d))") != std::string::npos);
  CHECK(captions.find("(250^(\u22122k/d))") != std::string::npos);
  CHECK(captions.find("Solid: interleaved encoding, dashed: concatenated.") != std::string::npos);
  CHECK(captions.find("combined similarity (interleaved, \u221Ad)") != std::string::npos);
  const json j = json::parse(resultsJson(r));
  CHECK(j["same_token"]["curves"][0]["label"] == "interleaved, scale 1");
  CHECK(j["same_token"]["curves"][4]["label"] == "concatenated, scale sqrt(d)");
  CHECK(j["training"][0]["combined_interleaved"] == 0.9);
  CHECK(j["training"][0]["combined_concatenated"] == 0.8);
  CHECK_FALSE(j["training"][0].contains("combined_book"));
}

TEST_CASE("report: writeReport refuses a path it cannot create", "[report]") {
  test::TempDir tmp;
  test::writeText(tmp.file("file"), "x");
  CHECK_THROWS_AS(writeReport(smallResults(), tmp.file("file") + "/sub"), IoError);
}

TEST_CASE("report: the page passes the headless Chromium check", "[report][chromium]") {
  if (std::system("command -v chromium >/dev/null 2>&1") != 0)
    POSVEC_SKIP("chromium not installed");
  // Under ASan+UBSan the page would only be checked again: Chromium is not
  // instrumented, and writeReport of the same results runs there in other cases.
  if (test::kAddressSanitizer) POSVEC_SKIP("the Release run checks the page in Chromium");
  test::TempDir tmp;
  writeReport(smallResults(), tmp.file("report"));
  const std::string cmd = "bash " + test::quote(test::sourcePath("tools/scripts/check-report.sh")) + " " +
                          test::quote(tmp.file("report")) + " " +
                          test::quote(tmp.file("shot.png")) + " >/dev/null 2>&1";
  CHECK(std::system(cmd.c_str()) == 0);
  CHECK(std::filesystem::file_size(tmp.file("shot.png")) > 10000);
}
