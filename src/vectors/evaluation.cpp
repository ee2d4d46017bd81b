// GCC 12 reports false "may be used uninitialized" warnings inside Eigen's
// AVX-512 matrix-product kernels (the transposes in its packet math).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "posvec/evaluation.hpp"

#include <unicode/locid.h>
#include <unicode/unistr.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>

#include "ascii_space.hpp"
#include "posvec/error.hpp"
#include "posvec/io.hpp"
#include "formats_detail.hpp"
#include "utf8.hpp"

namespace posvec {

namespace {

using detail::inQuotes;

using detail::isAsciiSpace;

// Calls f(lineNumber, line) for each '\n'-terminated line (1-based numbers).
template <typename F>
void forEachLine(const std::string& text, F&& f) {
  std::size_t start = 0, no = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    f(++no, std::string_view(text).substr(start, end - start));
    start = end + 1;
  }
}

std::vector<std::string_view> splitWhitespace(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && isAsciiSpace(s[i])) ++i;
    std::size_t j = i;
    while (j < s.size() && !isAsciiSpace(s[j])) ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

bool blank(std::string_view s) { return std::all_of(s.begin(), s.end(), isAsciiSpace); }

// Python's float(): surrounding whitespace allowed, optional sign.
bool parseScore(std::string_view s, double& out) {
  while (!s.empty() && isAsciiSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && isAsciiSpace(s.back())) s.remove_suffix(1);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

// The evaluation vocabulary: the first `restrict` words, keyed (upper-cased or
// not) with the first, most frequent, word standing for its key.
class EvalVocabulary {
 public:
  EvalVocabulary(const Embeddings& e, const EvalOptions& o) : caseInsensitive_(o.caseInsensitive) {
    size_ = std::min(o.restrictVocab == 0 ? e.size() : o.restrictVocab, e.size());
    canon_.resize(size_);
    index_.reserve(size_);
    for (std::size_t i = 0; i < size_; ++i) {
      auto [it, fresh] = index_.emplace(key(e.words()[i]), static_cast<WordId>(i));
      canon_[i] = it->second;
      (void)fresh;
    }
  }
  std::size_t size() const { return size_; }
  std::string key(std::string_view w) const {
    return caseInsensitive_ ? upperCase(w) : std::string(w);
  }
  // Id of the word standing for `word`'s key, or -1.
  WordId find(std::string_view word) const {
    auto it = index_.find(key(word));
    return it == index_.end() ? -1 : it->second;
  }
  // Id standing for row i's key.
  WordId canonical(std::size_t i) const { return canon_[i]; }

 private:
  bool caseInsensitive_;
  std::size_t size_ = 0;
  std::vector<WordId> canon_;
  std::unordered_map<std::string, WordId> index_;
};

struct Question {
  WordId a, b, c, d;
  std::size_t section;
  std::size_t line = 0;
};

}  // namespace

std::string upperCase(std::string_view utf8) {
  if (std::all_of(utf8.begin(), utf8.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x80; })) {
    std::string out(utf8);
    for (char& c : out)
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    return out;
  }
  std::string out;
  icu::UnicodeString::fromUTF8(icu::StringPiece(utf8.data(), static_cast<int32_t>(utf8.size())))
      .toUpper(icu::Locale::getRoot())
      .toUTF8String(out);
  return out;
}

std::vector<double> averageRanks(const std::vector<double>& x) {
  std::vector<std::size_t> order(x.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return x[a] < x[b]; });
  std::vector<double> ranks(x.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && x[order[j + 1]] == x[order[i]]) ++j;
    const double r = (double(i) + double(j)) / 2.0 + 1.0;  // ranks i+1 .. j+1 share their mean
    for (std::size_t k = i; k <= j; ++k) ranks[order[k]] = r;
    i = j + 1;
  }
  return ranks;
}

double pearson(const std::vector<double>& x, const std::vector<double>& y) {
  const std::size_t n = x.size();
  if (n != y.size() || n < 2) return std::numeric_limits<double>::quiet_NaN();
  long double mx = 0, my = 0;
  for (std::size_t i = 0; i < n; ++i) mx += x[i], my += y[i];
  mx /= n, my /= n;
  long double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const long double dx = x[i] - mx, dy = y[i] - my;
    sxy += dx * dy, sxx += dx * dx, syy += dy * dy;
  }
  if (sxx == 0 || syy == 0) return std::numeric_limits<double>::quiet_NaN();
  const double r = static_cast<double>(sxy / std::sqrt(sxx * syy));
  return std::clamp(r, -1.0, 1.0);
}

double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) return std::numeric_limits<double>::quiet_NaN();
  return pearson(averageRanks(x), averageRanks(y));
}

// Evaluation sets are read whole; the largest published ones are a few MB.
constexpr std::uint64_t kMaxEvalFileBytes = std::uint64_t{256} << 20;

AnalogyResult evaluateAnalogies(const Embeddings& e, const std::string& path,
                                const EvalOptions& options) {
  const std::string text = readFile(path, kMaxEvalFileBytes, "file of analogy questions");
  const EvalVocabulary vocab(e, options);
  AnalogyResult result;
  std::vector<Question> questions;
  forEachLine(text, [&](std::size_t no, std::string_view line) {
    if (!detail::isValidUtf8(line))
      throw FormatError(inQuotes(path) + " line " + std::to_string(no) + ": not valid UTF-8");
    if (line.substr(0, 2) == ": ") {
      std::string_view name = line;
      while (!name.empty() && (name.front() == ':' || name.front() == ' ')) name.remove_prefix(1);
      while (!name.empty() && isAsciiSpace(name.back())) name.remove_suffix(1);
      result.sections.push_back({std::string(name)});
      return;
    }
    if (blank(line)) return;
    if (result.sections.empty())
      throw FormatError(inQuotes(path) + " line " + std::to_string(no) +
                        ": question before the first ': section' line (is this an analogy file?)");
    const auto words = splitWhitespace(line);
    if (words.size() != 4) {
      ++result.invalidLines;
      return;
    }
    ++result.questions;
    Question q{vocab.find(words[0]), vocab.find(words[1]), vocab.find(words[2]),
               vocab.find(words[3]), result.sections.size() - 1};
    q.line = no;
    if (q.a < 0 || q.b < 0 || q.c < 0 || q.d < 0) {
      ++result.sections.back().skipped;
      return;
    }
    questions.push_back(q);
  });
  if (result.questions == 0)
    throw InputError(inQuotes(path) +
                     " has no analogy questions (': section' lines followed by 'a b c d' lines)");

  // 3CosAdd for a batch of questions at once: one matrix product against the
  // restricted vocabulary, then the best 5 per question (as gensim's topn=5).
  const std::size_t n = vocab.size(), d = e.dim();
  const auto vocabRows = e.vectors().topRows(static_cast<Eigen::Index>(n));
  Eigen::VectorXf invNorm = vocabRows.rowwise().norm();
  for (Eigen::Index i = 0; i < invNorm.size(); ++i)
    invNorm[i] = invNorm[i] > 0 ? 1.0f / invNorm[i] : 0.0f;
  const std::size_t batch =
      std::clamp<std::size_t>((std::size_t(16) << 20) / std::max<std::size_t>(n, 1), 1, 512);
  constexpr int kTop = 5;
  std::vector<char> correct(questions.size(), 0);
  MatrixF queries(static_cast<Eigen::Index>(batch), static_cast<Eigen::Index>(d));
  MatrixF scores;
  for (std::size_t start = 0; start < questions.size(); start += batch) {
    const std::size_t m = std::min(batch, questions.size() - start);
    for (std::size_t k = 0; k < m; ++k) {
      const Question& q = questions[start + k];
      Eigen::RowVectorXf v = e.unitVector(q.b) - e.unitVector(q.a) + e.unitVector(q.c);
      const float norm = v.norm();
      if (norm > 0) v /= norm;
      queries.row(static_cast<Eigen::Index>(k)) = v;
    }
    scores.noalias() = queries.topRows(static_cast<Eigen::Index>(m)) * vocabRows.transpose();
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t k = 0; k < static_cast<std::ptrdiff_t>(m); ++k) {
      const Question& q = questions[start + static_cast<std::size_t>(k)];
      const float* row = scores.row(k).data();
      float topScore[kTop];
      WordId topId[kTop];
      int found = 0;
      for (std::size_t j = 0; j < n; ++j) {
        const auto id = static_cast<WordId>(j);
        if (id == q.a || id == q.b || id == q.c || invNorm[id] == 0) continue;
        const float s = row[j] * invNorm[id];
        if (found == kTop && !(s > topScore[kTop - 1])) continue;
        int pos = found < kTop ? found++ : kTop - 1;
        while (pos > 0 && s > topScore[pos - 1]) {
          topScore[pos] = topScore[pos - 1];
          topId[pos] = topId[pos - 1];
          --pos;
        }
        topScore[pos] = s;
        topId[pos] = id;
      }
      // gensim takes the first of the 5 whose key is not an input key; when all
      // are, the last one stands as the prediction.
      WordId predicted = -1;
      for (int t = 0; t < found; ++t) {
        predicted = vocab.canonical(static_cast<std::size_t>(topId[t]));
        if (predicted != q.a && predicted != q.b && predicted != q.c) break;
      }
      correct[start + static_cast<std::size_t>(k)] = predicted == q.d;
    }
    if (options.progress) options.progress(start + m, questions.size());
  }
  for (std::size_t i = 0; i < questions.size(); ++i) {
    AnalogySection& s = result.sections[questions[i].section];
    (correct[i] ? s.correct : s.incorrect)++;
    if (options.answered) options.answered(questions[i].line, correct[i] != 0);
  }
  result.total.name = "Total accuracy";
  for (const auto& s : result.sections) {
    result.total.correct += s.correct;
    result.total.incorrect += s.incorrect;
    result.total.skipped += s.skipped;
  }
  return result;
}

WordPairResult evaluateWordPairs(const Embeddings& e, const std::string& path,
                                 const EvalOptions& options) {
  const std::string text = readFile(path, kMaxEvalFileBytes, "file of word pairs");
  const EvalVocabulary vocab(e, options);
  WordPairResult result;
  std::vector<double> gold, model;
  forEachLine(text, [&](std::size_t no, std::string_view line) {
    if (!detail::isValidUtf8(line))
      throw FormatError(inQuotes(path) + " line " + std::to_string(no) + ": not valid UTF-8");
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);  // as Python's universal newlines
    if (line.empty() || line.front() == '#') return;
    if (blank(line)) return;
    // Exactly three tab-separated fields; words are not trimmed (as gensim).
    const std::size_t t1 = line.find('\t');
    const std::size_t t2 = t1 == std::string_view::npos ? t1 : line.find('\t', t1 + 1);
    double score;
    if (t2 == std::string_view::npos || line.find('\t', t2 + 1) != std::string_view::npos ||
        !parseScore(line.substr(t2 + 1), score)) {
      ++result.invalidLines;
      return;
    }
    // Python's float() reads "nan" and "inf" too, but one of them makes every correlation NaN.
    if (!std::isfinite(score))
      throw FormatError(inQuotes(path) + " line " + std::to_string(no) + ": score '" +
                        std::string(line.substr(t2 + 1)) + "' is not a finite number");
    const WordId a = vocab.find(line.substr(0, t1)),
                 b = vocab.find(line.substr(t1 + 1, t2 - t1 - 1));
    if (a < 0 || b < 0) {
      ++result.oov;
      return;
    }
    gold.push_back(score);
    model.push_back(cosine(e.vectors().row(a).data(), e.vectors().row(b).data(), e.dim()));
  });
  result.pairs = gold.size();
  if (gold.empty())
    throw InputError(inQuotes(path) + ": no pair has both words in the vocabulary (" +
                     std::to_string(result.oov) + " out of vocabulary, " +
                     std::to_string(result.invalidLines) +
                     " lines not 'word1<TAB>word2<TAB>score')");
  result.spearman = spearman(gold, model);
  result.pearson = pearson(gold, model);
  return result;
}

}  // namespace posvec
