/// \file
/// ModelState: everything needed to continue training (words, counts, both
/// weight matrices, the serialised configuration, the epochs done and their
/// losses). The trainer produces and resumes it; formats.hpp saves and loads it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "posvec/types.hpp"

namespace posvec {

namespace detail {
// A new subword model's input rows as training left them, not placed in the input
// matrix yet (TrainConfig::deferRows; the trainer's DenseRows implements it).
class UnplacedRows {
 public:
  virtual ~UnplacedRows() = default;
  // Rows [first, first + n) of the complete model as float32 into out[0 .. n * cols),
  // `input` being the model's (unplaced) input matrix, on `threads` threads (0: as
  // many as trained the model). Nothing is changed.
  virtual void rowsAsFloat(const MatrixF& input, std::int64_t first, std::int64_t n, float* out,
                           int threads) const = 0;
};
}  // namespace detail

/// The most threads training runs (TrainConfig::threads) and so the most thread
/// positions a model may record inside an unfinished epoch; a model file that
/// records more is refused when it is read.
inline constexpr int kMaxTrainThreads = 4096;

/// Where one thread was when training stopped inside an epoch (an interrupt or a
/// checkpoint): enough to finish that epoch exactly as if it had not stopped.
struct ShardProgress {
  std::int64_t position = 0;     ///< next id of the corpus stream to read
  std::int64_t end = 0;          ///< end of the thread's shard
  std::uint64_t rng = 0;         ///< the thread's random state (subsampling, windows, negatives)
  double loss = 0;               ///< summed loss of the epoch so far
  std::int64_t predictions = 0;  ///< predictions of the epoch so far (the loss's divisor)
};
/// Where an epoch stopped inside stands (ModelState::partial).
struct EpochProgress {
  std::int64_t words = 0;             ///< corpus words of the epoch done (sets the learning rate)
  std::int64_t streamSize = 0;        ///< ids in the corpus stream, to recognise the same corpus
  std::vector<ShardProgress> shards;  ///< one per thread; empty: at an epoch boundary
  /// True when training stopped inside the epoch (there is something to finish).
  bool active() const { return !shards.empty(); }
};

/// How ModelState's two matrices hold their values.
enum class PackedWeights : std::uint8_t {
  None,  ///< float32, as MatrixF says (every model read from a file, every float32 training)
  Bf16,  ///< bfloat16 values in the first half of each matrix's buffer
  Fp16   ///< IEEE half values in the first half of each matrix's buffer
};

/// A model's full training state, a plain value (copying copies the matrices).
/// The trainer owns the meaning of `config` (a serialised TrainConfig, key=value
/// lines); the file format just stores it.
///
/// Trained with 16-bit weights (TrainConfig::weights), the model comes back from
/// the trainer packed: `input` and `output` keep their shapes, but each buffer's
/// first half holds the 16-bit values row by row and the second half is unused
/// (its memory given back to the system where it can be). saveModel, embeddingsOf
/// and the trainer read packed models; code that reads the matrices itself calls
/// unpackWeights() first (in place: it needs no second copy).
struct ModelState {
  std::vector<std::string> words;    ///< the vocabulary, most frequent first
  std::vector<std::int64_t> counts;  ///< corpus count of each word
  MatrixF input;                     ///< word vectors (V x D)
  MatrixF output;      ///< output weights: negative sampling (V x D) or HS inner nodes ((V-1) x D)
  std::string config;  ///< TrainConfig::serialize() of the configuration trained with
  std::int32_t epochsDone = 0;      ///< epochs completed
  std::vector<double> epochLosses;  ///< mean loss of each epoch done (NaN: no prediction)
  EpochProgress partial;            ///< epoch epochsDone + 1 when stopped inside it
  PackedWeights packed = PackedWeights::None;  ///< how input and output hold their values
  /// Set only on a new subword model trained with TrainConfig::deferRows: the rows its
  /// words use are held here, gathered, and `input` (its shape right, its memory never
  /// touched) holds none of its values yet; the rows no word uses keep their initial
  /// values, drawn from the seed when needed. saveModel, saveFastTextModel and
  /// embeddingsOf read such a model as it is; everything else that reads `input` needs
  /// placeRows(model) first (the weight conversions refuse it). Copies share it.
  std::shared_ptr<detail::UnplacedRows> unplacedRows;
};

/// Converts a packed model's matrices to float32 in place (exactly: every 16-bit
/// value is a float32); nothing to do for an unpacked one.
void unpackWeights(ModelState& model);
/// Converts both matrices to `to` in place, rounding to nearest (even); the second
/// half of each buffer is given back to the system where it can be (Linux). A
/// packed model is unpacked first when `to` is another 16-bit type.
void packWeights(ModelState& model, PackedWeights to);
/// Row `r` of a (packed or float32) matrix of `model` as float32, into out[0..cols).
void readWeightRow(const ModelState& model, const MatrixF& matrix, Eigen::Index r, float* out);

}  // namespace posvec
