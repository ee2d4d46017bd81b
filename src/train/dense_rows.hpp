// Subword training's input rows, gathered into one dense matrix for its epochs.
// Of a model's 2M n-gram buckets, the vocabulary's words use a small share (about
// 150k on Brown's 28k words): trained in place, the rows a word composes lie on
// pages spread over a 0.8 to 2.4 GB matrix. Gathered, each word's own row sits
// beside its n-grams and the most frequent words' rows come first, so a window's
// rows share pages, and cache lines, with the rows the next windows read.
//
// A new model's input rows need not exist while it trains: trainPrepared leaves
// them undrawn, the dense matrix draws the rows it holds, and the model is
// completed (its unused rows drawn, the dense rows copied back) only when it is
// seen, so that its words' rows are not held twice. The values are the ones drawing the whole matrix first gives
// (each row's depend on its number and the seed only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels.hpp"
#include "posvec/model_state.hpp"
#include "posvec/types.hpp"

namespace posvec::detail {

// Row r's initial values for `seed` as the model stores them (float32, or rounded
// to nearest in a 16-bit type), into to[0..dim).
void drawStoredRow(void* to, std::size_t dim, std::uint64_t seed, std::uint64_t r,
                   PackedWeights packed);

// Draws input's rows from `from` on (all but those `skip` marks) as a new model's,
// each thread a contiguous range.
void drawRows(MatrixF& input, std::int64_t from, std::uint64_t seed, PackedWeights packed,
              int threads, const std::vector<char>* skip = nullptr);

class DenseRows final : public UnplacedRows {
 public:
  // The rows `rows` lists, each once.
  static std::size_t distinctRows(const SubwordRows& rows, std::size_t modelRows);
  // Whether to gather `used` of the model's `modelRows` rows of `rowBytes` each: when
  // they are a share s of them, copying them back at the end touches about
  // 1 - (1 - s)^k of the model's pages (k rows a page) while the dense copy still
  // holds s of its size. Gathered when that stays within the model's own size,
  // (1 - s)^k >= s: up to s = 0.16 at dim 100 and 0.3 at dim 300 in float32, 0.10
  // and 0.21 in 16 bits (Brown x4 and x16 use 0.09 and 0.15). Beyond it most rows
  // are used and dense already.
  static bool pays(std::size_t used, std::size_t modelRows, std::size_t rowBytes);

  // Renumbers `rows` (each word's input rows, as subwordRowsOf lists them) to
  // positions in the dense matrix: word 0's rows first (its own, then its n-grams
  // in order), then each next word's rows not placed yet. `modelRows`: the model's
  // input rows (words and buckets).
  DenseRows(SubwordRows& rows, std::size_t modelRows, std::size_t dim, PackedWeights packed);

  // Fills the dense matrix from `input`'s rows; rows from `undrawnFrom` on (when
  // not negative) are not drawn in `input` yet and are drawn here for `seed`.
  void gather(const MatrixF& input, std::int64_t undrawnFrom, std::uint64_t seed, int threads);

  // Makes `input` the model being trained: the dense rows copied back and, the
  // first time, the undrawn rows no word uses drawn. `release`: training is over;
  // the dense matrix's memory is given back as it is copied, so that the peak
  // stays near the model's own size.
  void scatter(MatrixF& input, int threads, bool release);

  // Rows [first, first + n) of the model these rows complete, as float32 into
  // out[0 .. n * dim): a used row from the dense matrix, an undrawn one drawn (as
  // scatter would store it), any other from `input`. Nothing is changed. `threads`
  // 0: as many as gathered them.
  void rowsAsFloat(const MatrixF& input, std::int64_t first, std::int64_t n, float* out,
                   int threads) const override;

  // Every dense value finite.
  bool finite() const;

  MatrixF& matrix() { return dense_; }
  const MatrixF& matrix() const { return dense_; }
  // The trainer's gathered rows behind a model's UnplacedRows.
  // (ConfigError for rows of another kind: a caller's own UnplacedRows.)
  static DenseRows& of(UnplacedRows& rows);
  static const DenseRows& of(const UnplacedRows& rows);
  // Whether the model's unused rows are still undrawn (no checkpoint completed it).
  bool undrawn() const { return undrawnFrom_ >= 0; }
  // Renumbers `rows` (listing rows of the model these rows complete, every one of
  // them gathered) to positions in matrix().
  void toPositions(SubwordRows& rows) const;

 private:
  std::vector<std::int32_t> source_;    // model row of each dense position
  std::vector<std::int32_t> position_;  // dense position of each model row, -1: not used
  std::size_t dim_;
  PackedWeights packed_;
  std::size_t rowBytes_;
  MatrixF dense_;
  std::int64_t undrawnFrom_ = -1;  // the model's rows from here are not drawn yet
  std::uint64_t seed_ = 0;
  int threads_ = 1;  // of the training that gathered the rows
};

}  // namespace posvec::detail
