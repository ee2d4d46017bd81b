// Writing fastText's `.bin`, version 12, as fastText 0.9.2 lays out an unsupervised
// model (FastText::saveModel): the magic number and version, the Args block (twelve
// int32 then the double t), the dictionary (size, nwords, nlabels as int32; ntokens
// and the pruned-table size as int64; then each word, its NUL, an int64 count and an
// int8 type, 0 for a word), then each matrix as a quantization flag byte, int64 rows
// and columns, and row-major float32 values. All little-endian, as fastText writes
// them on the machines it runs on. Every length is checked before the first byte is
// written, so a bad argument never leaves a file behind (and the write is atomic).
#include <limits>
#include <unordered_set>

#include "formats_detail.hpp"
#include "posvec/error.hpp"
#include "posvec/io.hpp"
#include "posvec/subwords.hpp"

namespace posvec {

namespace {

using detail::inQuotes;
using detail::put;

constexpr std::int32_t kMagic = 793712314;
constexpr std::int32_t kVersion = 12;
constexpr auto kInt32Max = std::numeric_limits<std::int32_t>::max();

std::string rowsText(Eigen::Index rows, Eigen::Index cols) {
  return std::to_string(rows) + " x " + std::to_string(cols);
}

// Everything saveFastText() needs to be true, each failure one line naming the path.
void checkFastText(const std::string& path, const std::vector<std::string>& words,
                   const std::vector<std::int64_t>& counts, const detail::FastTextMatrix& input,
                   const detail::FastTextMatrix& output, const FastTextArgs& a) {
  const std::string what = "cannot save fastText model " + inQuotes(path) + ": ";
  auto fail = [&](const std::string& why) { throw InputError(what + why); };
  if (words.size() > static_cast<std::size_t>(kInt32Max))
    fail(std::to_string(words.size()) + " words (fastText holds at most 2^31 - 1)");
  const auto nwords = static_cast<Eigen::Index>(words.size());
  if (counts.size() != words.size())
    fail(std::to_string(words.size()) + " words but " + std::to_string(counts.size()) + " counts");
  if (a.dim <= 0) fail("the dimension " + std::to_string(a.dim) + " is not positive");
  if (a.bucket < 0) fail("the bucket count " + std::to_string(a.bucket) + " is negative");
  if (a.minn < 0 || a.maxn < 0 || (a.maxn > 0 && a.minn > a.maxn) || a.maxn > 1024)
    fail("the n-gram lengths " + std::to_string(a.minn) + ".." + std::to_string(a.maxn) +
         " are impossible");
  if (a.model != FastTextModel::Cbow && a.model != FastTextModel::SkipGram)
    fail("unknown model kind " + std::to_string(static_cast<std::int32_t>(a.model)) +
         " (skip-gram or CBOW)");
  const auto loss = static_cast<std::int32_t>(a.loss);
  if (loss < 1 || loss > 4) fail("unknown loss " + std::to_string(loss));
  if (input.cols != a.dim || input.rows != nwords + a.bucket)
    fail("the input matrix is " + rowsText(input.rows, input.cols) + " but " +
         std::to_string(nwords) + " words and " + std::to_string(a.bucket) +
         " buckets of dimension " + std::to_string(a.dim) + " need " +
         rowsText(nwords + a.bucket, a.dim));
  const bool hsInner = a.loss == FastTextLoss::HierarchicalSoftmax && output.rows == nwords - 1;
  if (output.rows * output.cols != 0 &&
      (output.cols != a.dim || (output.rows != nwords && !hsInner)))
    fail("the output matrix is " + rowsText(output.rows, output.cols) + ", expected " +
         rowsText(nwords, a.dim) + " (one row per word)");
  std::unordered_set<std::string_view> seen;
  seen.reserve(words.size());
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    // fastText reads a word up to its NUL: an empty word or one with a NUL cannot round-trip.
    if (w.empty() || w.find('\0') != std::string::npos)
      fail("word " + std::to_string(i + 1) + " ('" + detail::shown(w) +
           "') is empty or contains a NUL byte");
    if (!seen.insert(w).second) fail("word '" + detail::shown(w) + "' appears twice");
    if (counts[i] < 0) fail("negative count for '" + detail::shown(w) + "'");
  }
}

}  // namespace

namespace detail {

FastTextMatrix fastTextMatrix(const MatrixF& m) {
  return {m.rows(), m.cols(), [&m](std::ostream& out) {
            detail::writeFloats(out, m.data(), static_cast<std::size_t>(m.size()));
          }};
}

void saveFastTextMatrices(const std::string& path, const std::vector<std::string>& words,
                          const std::vector<std::int64_t>& counts, const FastTextMatrix& input,
                          const FastTextMatrix& output, const FastTextArgs& a) {
  checkFastText(path, words, counts, input, output, a);
  const auto nwords = static_cast<std::int32_t>(words.size());
  std::int64_t ntokens = a.ntokens;
  if (ntokens < 0) {
    ntokens = 0;
    for (auto c : counts) ntokens += c;
  }
  writeToPathOrStdout(path, [&](std::ostream& out) {
    std::string head;
    put(head, kMagic);
    put(head, kVersion);
    for (std::int32_t v :
         {a.dim, a.ws, a.epoch, a.minCount, a.neg, a.wordNgrams, static_cast<std::int32_t>(a.loss),
          static_cast<std::int32_t>(a.model), a.bucket, a.minn, a.maxn, a.lrUpdateRate})
      put(head, v);
    put(head, a.t);
    put(head, nwords);           // size
    put(head, nwords);           // nwords
    put(head, std::int32_t{0});  // nlabels
    put(head, ntokens);
    put(head, std::int64_t{-1});  // no pruned-bucket table
    for (std::size_t i = 0; i < words.size(); ++i) {
      head += words[i];
      head += '\0';
      put(head, counts[i]);
      put(head, std::int8_t{0});  // a word, not a label
    }
    put(head, std::uint8_t{0});  // the input matrix is not quantized
    put(head, static_cast<std::int64_t>(input.rows));
    put(head, static_cast<std::int64_t>(input.cols));
    out.write(head.data(), static_cast<std::streamsize>(head.size()));
    input.write(out);

    std::string mid;
    put(mid, std::uint8_t{0});  // nor the output matrix
    put(mid, static_cast<std::int64_t>(nwords));
    put(mid, static_cast<std::int64_t>(a.dim));
    out.write(mid.data(), static_cast<std::streamsize>(mid.size()));
    // Rows the caller has not got (an unknown output layer, or the last row a
    // hierarchical softmax of nwords - 1 inner nodes leaves) are zeros.
    const auto have = static_cast<std::size_t>(output.rows * output.cols);
    if (have != 0) output.write(out);
    const std::vector<float> zeros(static_cast<std::size_t>(a.dim), 0.0f);
    for (std::size_t done = have; done < static_cast<std::size_t>(nwords) * zeros.size();
         done += zeros.size())
      detail::writeFloats(out, zeros.data(), zeros.size());
  });
}

}  // namespace detail

void saveFastText(const std::string& path, const std::vector<std::string>& words,
                  const std::vector<std::int64_t>& counts, const MatrixF& input,
                  const MatrixF& output, const FastTextArgs& a) {
  detail::saveFastTextMatrices(path, words, counts, detail::fastTextMatrix(input),
                               detail::fastTextMatrix(output), a);
}

void SubwordModel::save(const std::string& path) const {
  if (file_)
    throw ConfigError("cannot save fastText model " + inQuotes(path) +
                      ": it was opened for lookups only (its matrices stay in the file); load it "
                      "whole to save it");
  if (output_.rows() != static_cast<Eigen::Index>(words_.size()))
    throw ConfigError("cannot save fastText model " + inQuotes(path) +
                      ": it has no output matrix (it was made from a posvec model's input rows)");
  if (pruneSize_ >= 0)
    throw ConfigError("cannot save fastText model " + inQuotes(path) +
                      ": its dictionary has a pruned-bucket table, which only quantized models "
                      "use");
  saveFastText(path, words_, counts_, input_, output_, args_);
}

}  // namespace posvec
