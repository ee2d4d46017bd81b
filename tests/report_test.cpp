#include "posvec/report.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "posvec/error.hpp"
#include "svg.hpp"
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

StudyResults smallResults() {
  static const Embeddings e = randomEmbeddings(64, 4), e32 = randomEmbeddings(32, 5);
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

TEST_CASE("report: files exist, SVGs are well-formed XML, results.json matches the analysis",
          "[report]") {
  const StudyResults r = smallResults();
  test::TempDir tmp;
  const std::string dir = tmp.file("report");
  writeReport(r, dir);
  const auto figures = studyFigures(r);
  REQUIRE(figures.size() == 10);
  for (const auto& f : figures) {
    INFO(f.file);
    const std::string path = dir + "/" + f.file;
    REQUIRE(std::filesystem::exists(path));
    const std::string text = test::readText(path);
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
  CHECK(inlineSvgs == figures.size());

  const json j = json::parse(test::readText(dir + "/results.json"));
  const PositionalEncoder book([] {
    PositionalOptions o;
    o.dim = 64;
    o.encoding = Encoding::Book;
    return o;
  }());
  CHECK(j["positional_similarity"].get<double>() == book.similarity(2, 10));
  CHECK(j["word_similarity"].get<double>() == r.pairs[0].wordSimilarity);
  CHECK(j["combined_similarity"].get<double>() == r.pairs[0].combinedSimilarity);
  CHECK(j["pairs"].size() == 2);
  CHECK(j["pairs"][1]["encoding"] == "interleaved");
  CHECK(j["pairs"][1]["positional_similarity"].get<double>() == r.pairs[1].positionalSimilarity);
  const auto profile = distanceProfile(book, 100, 256);
  CHECK(j["distance_profile"]["curves"][0]["label"] == "book");
  CHECK(j["distance_profile"]["curves"][0]["values"].get<std::vector<double>>() == profile);
  CHECK(j["decomposition"].size() == r.experiments.decompositions.size());
  CHECK(j["decomposition"][0]["combined_similarity"].get<double>() ==
        r.experiments.decompositions[0].combinedSimilarity);
  CHECK(j["same_token"]["curves"][0]["values"].get<std::vector<double>>() ==
        r.experiments.sameToken[0].values);
  CHECK(j["training"][3]["word_similarity"].is_null());  // NaN: the word was not in that part
}

TEST_CASE("report: the text table and the summary JSON", "[report]") {
  const StudyResults r = smallResults();
  const std::string table = studyTable(r);
  CHECK(table.find("black:2 ~ brown:10") != std::string::npos);
  CHECK(table.find("interleaved") != std::string::npos);
  CHECK(table.find("0.8600013") != std::string::npos);  // the published value line
  const json j = json::parse(summaryJson(r));
  for (const char* key :
       {"word_similarity", "positional_similarity", "combined_similarity", "settings", "pairs"})
    CHECK(j.contains(key));
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
  test::TempDir tmp;
  writeReport(smallResults(), tmp.file("report"));
  const std::string cmd = "bash " + test::quote(test::sourcePath("tools/check-report.sh")) + " " +
                          test::quote(tmp.file("report")) + " " +
                          test::quote(tmp.file("shot.png")) + " >/dev/null 2>&1";
  CHECK(std::system(cmd.c_str()) == 0);
  CHECK(std::filesystem::file_size(tmp.file("shot.png")) > 10000);
}
