#include "posvec/embeddings.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "posvec/error.hpp"

namespace posvec {

Embeddings::Embeddings(std::vector<std::string> words, MatrixF vectors, std::vector<std::int64_t> counts)
    : words_(std::move(words)), vectors_(std::move(vectors)), counts_(std::move(counts)) {
  if (static_cast<std::size_t>(vectors_.rows()) != words_.size())
    throw InputError("embeddings: " + std::to_string(words_.size()) + " words but " +
                     std::to_string(vectors_.rows()) + " vectors");
  if (!counts_.empty() && counts_.size() != words_.size())
    throw InputError("embeddings: " + std::to_string(words_.size()) + " words but " +
                     std::to_string(counts_.size()) + " counts");
  std::size_t capacity = 16;
  while (capacity < 2 * words_.size()) capacity *= 2;
  slots_.assign(capacity, 0);
  const std::size_t mask = capacity - 1;
  for (std::size_t i = 0; i < words_.size(); ++i) {
    const std::string& w = words_[i];
    if (w.empty()) throw InputError("embeddings: word " + std::to_string(i) + " is empty");
    if (w.find_first_of(" \t\n\r") != std::string::npos)
      throw InputError("embeddings: word '" + w + "' contains whitespace");
    std::size_t s = std::hash<std::string_view>{}(w) & mask;
    for (; slots_[s] != 0; s = (s + 1) & mask)
      if (words_[slots_[s] - 1] == w)
        throw InputError("embeddings: word '" + w + "' appears twice");
    slots_[s] = static_cast<std::uint32_t>(i + 1);
  }
}

const Eigen::VectorXf& Embeddings::norms() const {
  std::call_once(norms_->once, [&] { norms_->norms = vectors_.rowwise().norm(); });
  return norms_->norms;
}

std::optional<WordId> Embeddings::find(std::string_view word) const {
  if (slots_.empty()) return std::nullopt;
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t s = std::hash<std::string_view>{}(word) & mask; slots_[s] != 0;
       s = (s + 1) & mask)
    if (words_[slots_[s] - 1] == word) return static_cast<WordId>(slots_[s] - 1);
  return std::nullopt;
}

WordId Embeddings::id(std::string_view word) const {
  auto found = find(word);
  if (!found) throw InputError("unknown word '" + std::string(word) + "' (not in the vocabulary)");
  return *found;
}

Eigen::RowVectorXf Embeddings::vector(std::string_view word) const { return vectors_.row(id(word)); }

Eigen::RowVectorXf Embeddings::unitVector(WordId id) const {
  Eigen::RowVectorXf v = vectors_.row(id);
  const float n = norms()[id];
  if (n > 0) v /= n;
  return v;
}

double Embeddings::similarity(std::string_view a, std::string_view b) const {
  return cosine(vectors_.row(id(a)).data(), vectors_.row(id(b)).data(), dim());
}

std::vector<Neighbour> Embeddings::nearestTo(const Eigen::RowVectorXf& query, std::size_t k,
                                             const std::vector<WordId>& exclude,
                                             std::size_t limit) const {
  if (static_cast<std::size_t>(query.size()) != dim())
    throw InputError("query has dimension " + std::to_string(query.size()) + ", vectors have " +
                     std::to_string(dim()));
  const std::size_t n = (limit == 0 || limit > size()) ? size() : limit;
  const float qn = query.norm();
  if (n == 0 || k == 0 || qn == 0) return {};
  Eigen::VectorXf scores = vectors_.topRows(static_cast<Eigen::Index>(n)) * (query.transpose() / qn);
  const Eigen::VectorXf& norm = norms();
  for (std::size_t i = 0; i < n; ++i) scores[i] = norm[i] > 0 ? scores[i] / norm[i] : -2.0f;
  // Only the excluded words inside the first n rows take a place away from the k:
  // a restricted search returns k words whenever n - (excluded among them) >= k.
  std::size_t excluded = 0;
  for (WordId e : exclude)
    if (e >= 0 && static_cast<std::size_t>(e) < n && scores[e] > -3.0f) {
      scores[e] = -3.0f;
      ++excluded;
    }
  std::vector<WordId> order(n);
  std::iota(order.begin(), order.end(), 0);
  const std::size_t take = std::min(k, n - excluded);
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(take), order.end(),
                    [&](WordId a, WordId b) { return scores[a] > scores[b] || (scores[a] == scores[b] && a < b); });
  std::vector<Neighbour> out;
  for (std::size_t i = 0; i < take; ++i) {
    if (scores[order[i]] < -1.5f) break;
    out.push_back({words_[order[i]], scores[order[i]]});
  }
  return out;
}

std::vector<Neighbour> Embeddings::nearest(std::string_view word, std::size_t k) const {
  const WordId w = id(word);
  return nearestTo(vectors_.row(w), k, {w});
}

std::vector<Neighbour> Embeddings::analogy(std::string_view a, std::string_view b, std::string_view c,
                                           std::size_t k, std::size_t limit) const {
  const WordId ia = id(a), ib = id(b), ic = id(c);
  Eigen::RowVectorXf q = unitVector(ib) - unitVector(ia) + unitVector(ic);
  return nearestTo(q, k, {ia, ib, ic}, limit);
}

}  // namespace posvec
