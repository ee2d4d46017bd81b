/// @file phrases.hpp
/// Collocations joined into single tokens ("new_york"), as gensim 4's `Phrases` finds
/// and applies them: unigram and bigram counts over the corpus (a bigram may hold
/// connector words between its two ends: "bank_of_america"), each candidate scored by
/// gensim's `original_scorer` or `npmi_scorer`, and a sentence rewritten left to right
/// with the phrases that score above the threshold. The same corpus and settings give
/// gensim's phrases and gensim's rewritten sentences.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "posvec/corpus.hpp"
#include "posvec/settings.hpp"

namespace posvec {

/// How a candidate phrase is scored (gensim's `scoring`).
enum class PhraseScoring {
  Default,  ///< (bigram − min_count) / (count_a · count_b) · vocabulary size (gensim's original)
  Npmi,     ///< normalised pointwise mutual information, in [−1, 1]
  /// word2phrase.c's rule: (bigram − min_count) / count_a / count_b · words read, in
  /// single precision, for a bigram and two words each counted at least min_count times;
  /// its counting pairs the last word of a sentence with the first of the next.
  Word2phrase
};
/// The names of PhraseScoring's values in text.
inline constexpr Choice<PhraseScoring> kPhraseScoringNames[] = {
    {PhraseScoring::Default, "default"},
    {PhraseScoring::Npmi, "npmi"},
    {PhraseScoring::Word2phrase, "word2phrase"}};

/// gensim 4's ENGLISH_CONNECTOR_WORDS: articles, some prepositions and conjunctions.
std::vector<std::string> englishConnectorWords();

/// The settings of phrase detection; defaults are gensim 4.2's.
struct PhraseOptions {
  std::int64_t minCount = 5;  ///< bigrams seen fewer times are never phrases (at least 1)
  double threshold = 10.0;    ///< a phrase scores above it (npmi: in [−1, 1]; default: above 0)
  PhraseScoring scoring = PhraseScoring::Default;  ///< the scorer
  std::string delimiter = "_";                     ///< joins a phrase's words (not empty)
  /// Counting prunes rare entries (gensim's rule: counts below 1, 2, 3, ... in turn) whenever
  /// the unigrams and bigrams counted exceed this many (at least 1).
  std::int64_t maxVocab = 40000000;
  /// Words that may sit inside a phrase but never start or end one (none by default).
  std::vector<std::string> connectorWords;
  /// Threads of Phrases::findAndJoin() (0: all cores); the phrases do not depend on it.
  int threads = 0;
  /// Throws ConfigError naming the setting out of range.
  void validate() const;
};

/// PhraseOptions' settings, a row each (settings.hpp); connector words are a list,
/// spelled by the front ends (kPhraseArguments).
inline constexpr auto kPhraseSettings = std::tuple{
    SettingRow<PhraseOptions, std::int64_t>{
        .member = &PhraseOptions::minCount,
        .setting = {"phraseMinCount", "the phrases' minimum count"},
        .key = "min_count",
        .spelled = {"--min-count", "min_count"},
        .help = "Bigrams seen fewer times are never phrases",
        .bounds = atLeast(1)},
    SettingRow<PhraseOptions, double>{
        .member = &PhraseOptions::threshold,
        .setting = {"phraseThreshold", "the phrase threshold"},
        .key = "threshold",
        .spelled = {"--threshold", "threshold"},
        .help = "A phrase scores above this (npmi: between -1 and 1)"},
    SettingRow<PhraseOptions, PhraseScoring>{
        .member = &PhraseOptions::scoring,
        .setting = {"phraseScoring", "the phrase scoring"},
        .key = "scoring",
        .spelled = {"--scoring", "scoring"},
        .help = "default (gensim's original scorer), npmi, or word2phrase (word2phrase.c's rule)",
        .choices = kPhraseScoringNames},
    SettingRow<PhraseOptions, std::string>{.member = &PhraseOptions::delimiter,
                                           .setting = {"phraseDelimiter", "the phrase delimiter"},
                                           .key = "delimiter",
                                           .spelled = {"--delimiter", "delimiter"},
                                           .help = "Joins a phrase's words"},
    SettingRow<PhraseOptions, std::int64_t>{
        .member = &PhraseOptions::maxVocab,
        .setting = {"phraseMaxVocab", "the phrase vocabulary's limit"},
        .key = "max_vocab_size",
        .spelled = {"--max-vocab", "max_vocab_size"},
        .help = "Prune rare counts (gensim's rule) past this many unigrams and bigrams",
        .bounds = atLeast(1)},
    SettingRow<PhraseOptions, int>{
        .member = &PhraseOptions::threads,
        .setting = {"phraseThreads", "the phrase threads"},
        .spelled = {"--threads", "", {}, "-t"},
        .help = "Threads counting and rewriting (0: all cores); the phrases are the same",
        .bounds = between(0, 4096)},
};

/// The list setting the front ends spell themselves.
inline constexpr auto kPhraseArguments = std::tuple{
    ArgumentRow{.setting = {"connectorWords", "the connector words"},
                .spelled = {"--connector-words", "connector_words"},
                .help = "english (gensim's list), none, or a file of words"},
};

/// A phrase found in the counts, with its score.
struct FoundPhrase {
  std::string phrase;      ///< its words joined by the delimiter
  double score = 0;        ///< its score under the options' scorer
  std::int64_t count = 0;  ///< how many times the joined span was counted
};

namespace detail {
class PhraseCounts;
}

/// Counts and the rules that turn them into phrases (gensim's `Phrases`). Movable, not
/// copyable (its counts can be large); freeze() gives the phrases alone.
class Phrases {
 public:
  /// Validates `options`.
  explicit Phrases(PhraseOptions options = {});
  ~Phrases();
  /// Takes over another model's counts.
  Phrases(Phrases&&) noexcept;
  /// Takes over another model's counts.
  Phrases& operator=(Phrases&&) noexcept;

  /// Counts one sentence's unigrams and bigrams (gensim's learning pass, pruning
  /// included: the same sentences in the same order give gensim's counts).
  void addSentence(const std::vector<std::string>& sentence);
  /// Counts every sentence of a corpus.
  void addCorpus(const CorpusSource& corpus);

  /// The phrase joining `a`, `between` and `b`, and its score, when it scores above
  /// the threshold; nullopt otherwise (gensim's score_candidate).
  std::optional<FoundPhrase> score(const std::string& a, const std::string& b,
                                   const std::vector<std::string>& between = {}) const;
  /// The sentence with its phrases joined, left to right (gensim's phrases[sentence]).
  std::vector<std::string> apply(const std::vector<std::string>& sentence) const;
  /// Hands each sentence of `corpus`, its phrases joined, to `sink` (a second read).
  void applyCorpus(const CorpusSource& corpus,
                   const std::function<void(const std::vector<std::string>&)>& sink) const;
  /// Every counted bigram that scores as a phrase, sorted by score (highest first, then
  /// by phrase) (gensim's export_phrases, ordered).
  std::vector<FoundPhrase> exportPhrases() const;

  /// A frozen copy (gensim's freeze()): the phrases and their scores, no other counts. It
  /// rewrites sentences as this model does and counts nothing more.
  Phrases freeze() const;
  /// A frozen model of `phrases` (a saved table), applied with `options`; `corpusWords` and
  /// `countedKeys` are what its corpusWords() and vocabularySize() report.
  static Phrases frozen(PhraseOptions options, const std::vector<FoundPhrase>& phrases,
                        std::int64_t corpusWords = 0, std::size_t countedKeys = 0);

  /// Finds the phrases of `corpus` and writes the corpus to `out` with them joined, one
  /// sentence a line, its tokens separated by a space (a sentence without words is not
  /// written): the phrases and lines that addCorpus(), freeze() and applyCorpus() give,
  /// on `options.threads` threads; the result is the same at any thread count. Pre-tokenized
  /// files are read twice (counted, then rewritten) and nothing grows with the corpus but
  /// the tables of counts; other input is read once and kept as word ids (4 bytes a word,
  /// in memory or a temporary file). Returns the frozen phrases, reporting the
  /// counts' corpusWords() and vocabularySize().
  static Phrases findAndJoin(const CorpusSource& corpus, PhraseOptions options, std::ostream& out);
  /// True for a frozen model (freeze(), frozen(), readPhraseTable()).
  bool isFrozen() const { return frozen_ != nullptr; }

  /// The options it was built with (validated).
  const PhraseOptions& options() const { return options_; }
  /// Unigrams and bigrams counted (gensim's len(vocab)); a frozen model: those of the
  /// model it was frozen from.
  std::size_t vocabularySize() const;
  /// Words read, connector words included (gensim's corpus_word_count).
  std::int64_t corpusWords() const { return corpusWords_; }
  /// The count of a unigram or of a joined bigram; 0 when absent.
  std::int64_t count(const std::string& token) const;

 private:
  PhraseOptions options_;
  std::unordered_set<std::string> connectors_;
  std::unique_ptr<detail::PhraseCounts> counts_;
  std::int64_t corpusWords_ = 0;
  std::int64_t minReduce_ = 1;
  std::size_t countedKeys_ = 0;  // a frozen model: its counting model's vocabularySize()
  std::string lastWord_;  // word2phrase scoring: the last word counted, which pairs with the next
  // A frozen model's phrases: joined phrase -> (score, count).
  std::shared_ptr<const std::unordered_map<std::string, FoundPhrase>> frozen_;
};

/// The most memory Phrases::findAndJoin() holds for its counts, whatever the corpus (bytes):
/// each thread counts into tables that stop at PhraseOptions::maxVocab keys, and the merge
/// stops once the merged tables pass that many; the string path gensim's pruning needs
/// keeps at most as many keys.
struct PhraseMemoryBound {
  int threads = 0;             ///< threads counting (PhraseOptions::threads, 0 resolved)
  std::uint64_t keyBytes = 0;  ///< the most a key takes, its table's free slots included
  std::uint64_t counts = 0;    ///< (threads + 1) × maxVocab × keyBytes
  std::uint64_t buffers = 0;   ///< each thread's read, count and write buffers
  /// counts + buffers.
  std::uint64_t total() const { return counts + buffers; }
};
/// The bound for `options` (validated), before any corpus is read.
PhraseMemoryBound phraseMemoryBound(const PhraseOptions& options);

/// Writes the phrase table: "# posvec phrases: " and the settings, "# connector_words:" and
/// the connector words, then "phrase<TAB>count<TAB>score" a line, highest score first
/// (atomically; "-" is standard output).
void savePhraseTable(const std::string& path, const Phrases& phrases);
/// Reads a table savePhraseTable() wrote as a frozen model; FormatError naming the line
/// for anything else, IoError when it cannot be read.
Phrases readPhraseTable(const std::string& path);

}  // namespace posvec
