/// \file
/// Evaluation of word vectors on the standard test sets, with the semantics of
/// gensim's KeyedVectors.evaluate_word_analogies / evaluate_word_pairs, so that
/// numbers compare: analogy accuracy (3CosAdd) per section, and Spearman / Pearson
/// correlation with human similarity judgements.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "posvec/embeddings.hpp"

namespace posvec {

/// Options of evaluateAnalogies() and evaluateWordPairs().
struct EvalOptions {
  /// Only the first (most frequent) words take part, as gensim's restrict_vocab
  /// (default 300000; 0: all).
  std::size_t restrictVocab = 300000;
  /// Upper-case words and questions (Unicode full case mapping, as Python's
  /// str.upper); when two words fold together, the more frequent one stands for both.
  bool caseInsensitive = true;
  /// Called from the calling thread now and then while analogies are solved, with
  /// the questions done and their total (may be empty).
  std::function<void(std::size_t done, std::size_t total)> progress;
  /// Analogies: called for each question answered, in file order, with its 1-based
  /// line number and whether the answer was right (to list the questions, as gensim does).
  std::function<void(std::size_t line, bool correct)> answered;
};

/// The counts of one section of an analogy file (or of all, AnalogyResult::total).
struct AnalogySection {
  std::string name;           ///< the section's name (the text after ": ")
  std::size_t correct = 0;    ///< questions answered right
  std::size_t incorrect = 0;  ///< questions answered wrong
  std::size_t skipped = 0;    ///< questions with a word outside the restricted vocabulary
  /// Questions answered: correct + incorrect.
  std::size_t evaluated() const { return correct + incorrect; }
  /// correct / evaluated; 0 when nothing was evaluated (as gensim).
  double accuracy() const { return evaluated() ? double(correct) / double(evaluated()) : 0.0; }
};

/// What evaluateAnalogies() found.
struct AnalogyResult {
  std::vector<AnalogySection> sections;  ///< in file order, empty ones included
  AnalogySection total;                  ///< "Total accuracy": every section together
  std::size_t questions = 0;             ///< well-formed "a b c d" lines
  std::size_t invalidLines = 0;          ///< other lines under a section (ignored, as gensim)
  /// Percentage of questions skipped for out-of-vocabulary words (gensim's oov_ratio).
  double oovPercent() const {
    return questions ? 100.0 * double(total.skipped) / double(questions) : 0.0;
  }
};

/// What evaluateWordPairs() found.
struct WordPairResult {
  double spearman = 0;           ///< rank correlation, average ranks for ties
  double pearson = 0;            ///< Pearson correlation of the similarities with the scores
  std::size_t pairs = 0;         ///< pairs with both words known (the ones correlated)
  std::size_t oov = 0;           ///< pairs dropped for an unknown word
  std::size_t invalidLines = 0;  ///< not `w1<TAB>w2<TAB>score` (ignored, as gensim)
  /// Percentage of the well-formed pairs dropped for an unknown word (gensim's oov_ratio).
  double oovPercent() const {
    return pairs + oov ? 100.0 * double(oov) / double(pairs + oov) : 0.0;
  }
};

/// Analogy file: ": section" lines, then "a b c d" lines (a is to b as c is to d).
/// A question counts as correct when the best 3CosAdd answer (b - a + c over unit
/// vectors, inputs excluded, among the first restrictVocab words) is d. Throws
/// IoError for an unreadable file, FormatError for a question before any section
/// or invalid UTF-8 (with the line number), InputError when there are no questions.
/// Solves the questions in batches on OpenMP's threads; callbacks run on the
/// calling thread.
AnalogyResult evaluateAnalogies(const Embeddings& embeddings, const std::string& path,
                                const EvalOptions& options = {});

/// Pair file: `w1<TAB>w2<TAB>score` lines, `#` comments. Pairs with an unknown
/// word are dropped and counted. Throws InputError when no pair is left,
/// FormatError for invalid UTF-8 or a score that is not finite, IoError for an
/// unreadable file.
WordPairResult evaluateWordPairs(const Embeddings& embeddings, const std::string& path,
                                 const EvalOptions& options = {});

/// Pearson correlation in double; NaN when either side is constant or sizes differ / < 2.
double pearson(const std::vector<double>& x, const std::vector<double>& y);
/// Spearman rank correlation: Pearson of the ranks, tied values share their average rank.
double spearman(const std::vector<double>& x, const std::vector<double>& y);
/// 1-based ranks, ties get the average of the ranks they span.
std::vector<double> averageRanks(const std::vector<double>& x);

/// Unicode full upper-casing of UTF-8 text as Python's str.upper() does it (ß -> SS).
std::string upperCase(std::string_view utf8);

}  // namespace posvec
