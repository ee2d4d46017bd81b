// What the study says about a run fits that run: the near-1 explanation only when
// the word similarity is near 1, the report's note naming the corpus used, figure
// titles that fit their figure, and attention maps drawn for `posvec attend`.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "posvec/report.hpp"
#include "svg.hpp"
#include "svg_reading.hpp"
#include "test_util.hpp"

using namespace posvec;
using posvec::test::quote;
using posvec::test::readText;
using posvec::test::runCli;
using posvec::test::RunResult;
using posvec::test::TempDir;
using posvec::test::writeText;
namespace svgread = posvec::test::svgread;

namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

StudyResults resultsWith(double wordSimilarity) {
  StudyResults r;
  r.settings.source = "brown.txt";
  r.settings.trained = true;
  r.settings.dim = 512;
  r.settings.scaleName = "sqrt(d)";
  r.settings.scale = 22.627417;
  r.settings.vocabulary = 14221;
  r.settings.corpusTokens = 1161192;
  r.words = {{"black", 2}, {"brown", 10}};
  r.encodings = {Encoding::Book};
  PairSimilarity p;
  p.a = {"black", 2};
  p.b = {"brown", 10};
  p.wordSimilarity = wordSimilarity;
  p.positionalSimilarity = 0.8600013;
  p.combinedSimilarity = 0.7;
  r.pairs.push_back(p);
  return r;
}

}  // namespace

TEST_CASE("report: the near-1 explanation only when the word similarity is near 1", "[report]") {
  const std::string far = studyTable(resultsWith(0.61));
  CHECK_FALSE(has(far, "why word similarity is near 1"));
  CHECK(has(far, "0.6100000"));
  const std::string near = studyTable(resultsWith(0.9989));
  CHECK(has(near, "why word similarity is near 1"));
}

TEST_CASE("report: the note describes the corpus the run used", "[report]") {
  const std::string far = reportHtml(resultsWith(0.61), {});
  CHECK_FALSE(has(far, "Why is the word similarity so close to 1?"));
  CHECK(has(far, "Word similarity 0.6100, not the published 0.9999."));
  CHECK(has(far,
            "In this run the vectors were trained on brown.txt (1161192 tokens, 14221 distinct "
            "words, 5 epochs)"));
  const std::string near = reportHtml(resultsWith(0.9993), {});
  CHECK(has(near, "Why is the word similarity so close to 1?"));
  CHECK(has(near, "In this run the vectors were trained on brown.txt"));
  CHECK(has(near, "first pair's word similarity is 0.9993"));
  // The study text's numbers are given as where the published value comes from,
  // not as a description of this run.
  CHECK(has(near, "that is where the published 0.9999 comes from"));
  StudyResults loaded = resultsWith(0.5);
  loaded.settings.trained = false;
  loaded.settings.source = "vectors.bin";
  CHECK(has(reportHtml(loaded, {}), "In this run the vectors come from vectors.bin (14221 words)"));
}

TEST_CASE("svg: a long title is set small enough to fit its figure", "[report]") {
  detail::svg::Heatmap h;
  h.title =
      "Attention weights: additive encodings, future weights zeroed after the softmax (not "
      "renormalised)";
  h.width = 820;
  h.height = 560;
  h.values = MatrixD::Identity(3, 3);
  detail::svg::DocumentIds ids;
  const std::string doc = detail::svg::render(h, ids);
  const auto texts = svgread::elements(doc, "text");
  REQUIRE_FALSE(texts.empty());
  const auto& title = texts.front();
  REQUIRE(title.text.rfind("Attention weights", 0) == 0);
  const double size = std::stod(title.get("font-size"));
  // DejaVu Sans Bold, the fallback font, advances 0.577 em a character on average
  // over this title (summed from the font's hmtx table): 839 px at 15 px, wider
  // than the figure. Centred, it must now fit with a margin on both sides.
  const double width = 0.58 * size * static_cast<double>(h.title.size());
  CHECK(0.58 * 15 * static_cast<double>(h.title.size()) > h.width);
  CHECK(size < 15);
  CHECK(size >= 10);
  CHECK(title.num("x") - width / 2 >= 8);
  CHECK(title.num("x") + width / 2 <= h.width - 8);
  // A short title keeps the figures' usual size.
  h.title = "Attention weights";
  CHECK(has(detail::svg::render(h, ids), "font-size=\"15\""));
}

TEST_CASE("attend: --format svg draws the map with the words on both axes", "[report][cli]") {
  TempDir dir;
  const std::string vec = dir.file("v.txt");
  // Orthogonal unit vectors scaled by 4: with identity projections and no positions
  // each token attends to itself with weight e^(16/sqrt 4)/(e^8 + 2) = 0.999329.
  writeText(vec, "3 4\ncat 4 0 0 0\nsat 0 4 0 0\nmat 0 0 4 0\n");
  const std::string base = "attend " + quote(vec) + " --positional none --scale 1 ";
  const RunResult svg = runCli(base + "--sentence 'cat sat mat' --format svg");
  INFO(svg.err);
  REQUIRE(svg.status == 0);
  CHECK(svg.out.rfind("<svg", 0) == 0);
  CHECK_FALSE(has(svg.out, "<image"));  // vector cells, no embedded PNG
  std::vector<std::string> labels;
  for (const auto& t : svgread::elements(svg.out, "text")) labels.push_back(t.text);
  for (const char* w : {"cat", "sat", "mat"})
    CHECK(std::count(labels.begin(), labels.end(), std::string(w)) == 2);  // both axes
  // Nine cells; the diagonal ones take the colour of 0.999329, the others of 0.000335.
  const auto cells = svgread::elements(svg.out, "rect");
  std::vector<std::string> fills;
  for (const auto& c : cells)
    if (c.num("width") > 100 && c.num("width") < 400) fills.push_back(c.get("fill"));  // 636/3 px
  REQUIRE(fills.size() == 9);
  CHECK(fills[0] == fills[4]);
  CHECK(fills[4] == fills[8]);
  CHECK(fills[1] != fills[0]);
  CHECK(fills[1] == fills[3]);
  // The extension chooses it too; two sentences make a page of two maps.
  const std::string out = dir.file("maps.html");
  const RunResult html =
      runCli(base + "--sentence 'cat sat' --sentence 'mat cat sat' -o " + quote(out));
  INFO(html.err);
  REQUIRE(html.status == 0);
  const std::string page = readText(out);
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(std::count(page.begin(), page.end(), '<') > 0);
  std::size_t svgs = 0;
  for (auto at = page.find("<svg"); at != std::string::npos; at = page.find("<svg", at + 1)) ++svgs;
  CHECK(svgs == 2);
  CHECK(has(page, "sentence 1"));
  CHECK(has(page, "sentence 2"));
  // svg is one map: several are refused with the way to get them all.
  const RunResult many = runCli(base + "--sentence 'cat sat' --sentence 'mat' --format svg");
  CHECK(many.status == 2);
  CHECK(has(many.err, "--format html"));
}
