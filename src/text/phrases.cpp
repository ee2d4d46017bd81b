// Phrase detection with gensim 4's rules (gensim/models/phrases.py, 4.2): the learning
// pass counts every non-connector word and every "start (connectors) end" span as one
// delimiter-joined key, pruning the counts below 1, 2, 3, ... in turn whenever more
// than max_vocab_size keys are held after a sentence; a candidate is a phrase when its
// two ends and the joined key were all counted and its score is above the threshold.
// Keys are the joined strings, as in gensim, so a corpus token that contains the
// delimiter is counted and looked up exactly as gensim does.
#include "posvec/phrases.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "corpus_detail.hpp"
#include "phrase_counts.hpp"
#include "posvec/error.hpp"
#include "posvec/io.hpp"

namespace posvec {

namespace detail {

double phraseScore(const PhraseOptions& o, std::int64_t ca, std::int64_t cb, std::int64_t cab,
                   std::size_t keys, std::int64_t words) {
  if (o.scoring == PhraseScoring::Default) {
    // (bigram - min_count) / float(a * b) * len(vocab), in gensim's order.
    const double denom = static_cast<double>(ca * cb);
    if (denom == 0) return -std::numeric_limits<double>::infinity();
    return static_cast<double>(cab - o.minCount) / denom * static_cast<double>(keys);
  }
  if (o.scoring == PhraseScoring::Word2phrase) {
    // word2phrase.c: counts below min_count are not in its vocabulary (score 0); the
    // score and its comparison with the threshold are single precision.
    if (ca < o.minCount || cb < o.minCount || cab < o.minCount)
      return -std::numeric_limits<double>::infinity();
    const float s = static_cast<float>(cab - o.minCount) / static_cast<float>(ca) /
                    static_cast<float>(cb) * static_cast<float>(words);
    // Above the float threshold: above the double one too (the float is the nearest).
    return s > static_cast<float>(o.threshold) ? s : -std::numeric_limits<double>::infinity();
  }
  if (cab < o.minCount) return -std::numeric_limits<double>::infinity();
  const double n = static_cast<double>(words);
  const double pa = static_cast<double>(ca) / n, pb = static_cast<double>(cb) / n,
               pab = static_cast<double>(cab) / n;
  return std::log(pab / (pa * pb)) / -std::log(pab);
}

}  // namespace detail

namespace {

// Calls f with kPhraseSettings' scoring row (settingText and readSetting spell its values).
template <typename F>
void withScoringRow(F&& f) {
  forEachSetting(kPhraseSettings, [&](const auto& row) {
    if (row.key == "scoring") f(row);
  });
}

std::string scoringName(const PhraseOptions& o) {
  std::string name;
  withScoringRow([&](const auto& row) { name = settingText(row, o); });
  return name;
}

}  // namespace

std::vector<std::string> englishConnectorWords() {
  return {"a", "an", "the", "for", "of", "with", "without", "at",
          "from", "to", "in", "on", "by", "and", "or"};
}

void PhraseOptions::validate() const {
  checkSettings(kPhraseSettings, *this);
  const auto about = [](std::string_view name) {
    return ErrorText::about(settingNamed(kPhraseSettings, name), "");
  };
  if (!std::isfinite(threshold))
    throw ConfigError(about("phraseThreshold") << "the phrase threshold must be a finite number");
  if (scoring == PhraseScoring::Npmi && (threshold < -1 || threshold > 1))
    throw ConfigError(about("phraseThreshold")
                      << "with npmi scoring the phrase threshold must be between -1 and 1 (got " +
                             std::to_string(threshold) + ")");
  if (scoring != PhraseScoring::Npmi && threshold <= 0)
    throw ConfigError(about("phraseThreshold")
                      << "with " + scoringName(*this) +
                             " scoring the phrase threshold must be above 0 (got " +
                             std::to_string(threshold) + ")");
  if (scoring == PhraseScoring::Word2phrase && !connectorWords.empty())
    throw ConfigError(ErrorText("word2phrase scoring takes no ")
                      << std::get<0>(kPhraseArguments).setting
                      << " (word2phrase.c pairs adjacent words only): give none, or another "
                         "scoring");
  if (delimiter.empty())
    throw ConfigError(about("phraseDelimiter") << "the phrase delimiter must not be empty");
}

Phrases::Phrases(PhraseOptions options)
    : options_(std::move(options)), counts_(std::make_unique<detail::PhraseCounts>()) {
  options_.validate();
  connectors_.insert(options_.connectorWords.begin(), options_.connectorWords.end());
}

Phrases::~Phrases() = default;
Phrases::Phrases(Phrases&&) noexcept = default;
Phrases& Phrases::operator=(Phrases&&) noexcept = default;

std::size_t Phrases::vocabularySize() const { return frozen_ ? countedKeys_ : counts_->size(); }

Phrases Phrases::freeze() const {
  return frozen(options_, exportPhrases(), corpusWords_, vocabularySize());
}

Phrases Phrases::frozen(PhraseOptions options, const std::vector<FoundPhrase>& phrases,
                        std::int64_t corpusWords, std::size_t countedKeys) {
  Phrases p(std::move(options));
  p.corpusWords_ = corpusWords;
  p.countedKeys_ = countedKeys;
  auto table = std::make_shared<std::unordered_map<std::string, FoundPhrase>>();
  for (const FoundPhrase& f : phrases) (*table)[f.phrase] = f;
  p.frozen_ = std::move(table);
  return p;
}

void Phrases::addSentence(const std::vector<std::string>& sentence) {
  if (frozen_)
    throw ConfigError(
        "a frozen phrase model counts nothing more: add sentences to the model "
        "it was frozen from");
  const std::string& delim = options_.delimiter;
  // word2phrase's counting pairs the last word of the previous sentence with the first.
  const bool carry = options_.scoring == PhraseScoring::Word2phrase;
  const std::string* start = carry && !lastWord_.empty() ? &lastWord_ : nullptr;
  std::string key;
  std::size_t between = 0;  // connector words since `start`
  for (std::size_t i = 0; i < sentence.size(); ++i) {
    const std::string& word = sentence[i];
    if (!connectors_.count(word)) {
      counts_->increment(word);
      if (start) {
        key.assign(*start);
        for (std::size_t j = i - between; j < i; ++j) key.append(delim).append(sentence[j]);
        key.append(delim).append(word);
        counts_->increment(key);
      }
      start = &word;
      between = 0;
    } else if (start) {
      ++between;
    }
    ++corpusWords_;
  }
  if (carry && start) lastWord_ = *start;
  if (static_cast<std::int64_t>(counts_->size()) > options_.maxVocab) {
    // gensim's prune_vocab: keep the counts of at least min_reduce.
    counts_->pruneBelow(minReduce_);
    ++minReduce_;
  }
}

void Phrases::addCorpus(const CorpusSource& corpus) {
  std::vector<std::string> sentence;
  detail::forEachToken(
      corpus, [&](std::string_view w) { sentence.emplace_back(w); },
      [&] {
        addSentence(sentence);
        sentence.clear();
      });
}

void Phrases::applyCorpus(const CorpusSource& corpus,
                          const std::function<void(const std::vector<std::string>&)>& sink) const {
  std::vector<std::string> sentence;
  detail::forEachToken(
      corpus, [&](std::string_view w) { sentence.emplace_back(w); },
      [&] {
        sink(apply(sentence));
        sentence.clear();
      });
}

std::int64_t Phrases::count(const std::string& token) const { return counts_->get(token); }

std::optional<FoundPhrase> Phrases::score(const std::string& a, const std::string& b,
                                          const std::vector<std::string>& between) const {
  std::string phrase = a;
  for (const auto& w : between) phrase.append(options_.delimiter).append(w);
  phrase.append(options_.delimiter).append(b);
  if (frozen_) {
    // gensim's FrozenPhrases: the joined span's score, when above the threshold.
    const auto it = frozen_->find(phrase);
    if (it == frozen_->end() || !(it->second.score > options_.threshold)) return std::nullopt;
    return it->second;
  }
  const std::int64_t ca = count(a);
  if (ca <= 0) return std::nullopt;
  const std::int64_t cb = count(b);
  if (cb <= 0) return std::nullopt;
  const std::int64_t cab = count(phrase);
  if (cab <= 0) return std::nullopt;
  const double s = detail::phraseScore(options_, ca, cb, cab, counts_->size(), corpusWords_);
  if (!(s > options_.threshold)) return std::nullopt;
  return FoundPhrase{std::move(phrase), s, cab};
}

std::vector<std::string> Phrases::apply(const std::vector<std::string>& sentence) const {
  std::vector<std::string> out;
  // gensim tests `if start_token:`, so an empty start word starts nothing.
  std::string start;
  bool open = false;
  std::vector<std::string> between;
  for (const std::string& word : sentence) {
    if (!connectors_.count(word)) {
      if (open && !start.empty()) {
        if (auto p = score(start, word, between)) {
          out.push_back(std::move(p->phrase));
          open = false;
          start.clear();
          between.clear();
        } else {
          out.push_back(start);
          for (auto& w : between) out.push_back(std::move(w));
          between.clear();
          start = word;
        }
      } else {
        start = word;
        open = true;
        between.clear();
      }
    } else if (open && !start.empty()) {
      between.push_back(word);
    } else {
      out.push_back(word);
    }
  }
  if (open && !start.empty()) {
    out.push_back(start);
    for (auto& w : between) out.push_back(std::move(w));
  }
  return out;
}

std::vector<FoundPhrase> Phrases::exportPhrases() const {
  std::vector<FoundPhrase> out;
  if (frozen_) {
    for (const auto& [phrase, f] : *frozen_)
      if (f.score > options_.threshold) out.push_back(f);
    std::sort(out.begin(), out.end(), [](const FoundPhrase& x, const FoundPhrase& y) {
      return x.score != y.score ? x.score > y.score : x.phrase < y.phrase;
    });
    return out;
  }
  const std::string& delim = options_.delimiter;
  counts_->forEach([&](std::string_view token, std::int64_t) {
    std::vector<std::string> parts;
    for (std::size_t at = 0;;) {
      const std::size_t next = token.find(delim, at);
      parts.emplace_back(
          token.substr(at, next == std::string::npos ? std::string::npos : next - at));
      if (next == std::string::npos) break;
      at = next + delim.size();
    }
    if (parts.size() < 2) return;
    const std::vector<std::string> between(parts.begin() + 1, parts.end() - 1);
    if (auto p = score(parts.front(), parts.back(), between)) out.push_back(std::move(*p));
  });
  std::sort(out.begin(), out.end(), [](const FoundPhrase& x, const FoundPhrase& y) {
    return x.score != y.score ? x.score > y.score : x.phrase < y.phrase;
  });
  return out;
}

// ---- the phrase table --------------------------------------------------------

void savePhraseTable(const std::string& path, const Phrases& p) {
  const PhraseOptions& o = p.options();
  writeToPathOrStdout(path, [&](std::ostream& out) {
    out.precision(17);
    out << "# posvec phrases: min_count=" << o.minCount << " threshold=" << o.threshold
        << " scoring=" << scoringName(o) << " delimiter=" << o.delimiter
        << " corpus_words=" << p.corpusWords() << " vocabulary=" << p.vocabularySize()
        << "\n# connector_words:";
    for (const auto& w : o.connectorWords) out << ' ' << w;
    out << '\n';
    for (const FoundPhrase& f : p.exportPhrases())
      out << f.phrase << '\t' << f.count << '\t' << f.score << '\n';
  });
}

Phrases readPhraseTable(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw IoError("cannot open the phrase table '" + path + "'");
  const auto bad = [&](std::size_t line, const std::string& what) {
    return FormatError("'" + path + "' line " + std::to_string(line) + ": " + what +
                       " (not a phrase table: a saved one opens with '# posvec phrases:')");
  };
  std::string line;
  PhraseOptions o;
  std::int64_t corpusWords = 0;
  std::size_t countedKeys = 0;
  if (!std::getline(in, line) || line.rfind("# posvec phrases: ", 0) != 0)
    throw bad(1, "the first line is not '# posvec phrases: ...'");
  {
    std::istringstream fields(line.substr(18));
    for (std::string kv; fields >> kv;) {
      const auto eq = kv.find('=');
      if (eq == std::string::npos) throw bad(1, "'" + kv + "' is not key=value");
      const std::string key = kv.substr(0, eq), value = kv.substr(eq + 1);
      try {
        if (key == "min_count")
          o.minCount = std::stoll(value);
        else if (key == "threshold")
          o.threshold = std::stod(value);
        else if (key == "scoring") {
          bool known = false;
          withScoringRow([&](const auto& row) { known = readSetting(row, value, o); });
          if (!known) throw bad(1, "unknown scoring '" + value + "'");
        } else if (key == "delimiter")
          o.delimiter = value;
        else if (key == "corpus_words")
          corpusWords = std::stoll(value);
        else if (key == "vocabulary")
          countedKeys = std::stoull(value);
      } catch (const std::logic_error&) {
        throw bad(1, "'" + kv + "' does not hold a number");
      }
    }
  }
  if (!std::getline(in, line) || line.rfind("# connector_words:", 0) != 0)
    throw bad(2, "the second line is not '# connector_words: ...'");
  {
    std::istringstream words(line.substr(18));
    for (std::string w; words >> w;) o.connectorWords.push_back(w);
  }
  std::vector<FoundPhrase> phrases;
  for (std::size_t n = 3; std::getline(in, line); ++n) {
    const auto t1 = line.find('\t');
    const auto t2 = t1 == std::string::npos ? t1 : line.find('\t', t1 + 1);
    if (t2 == std::string::npos) throw bad(n, "expected phrase, count and score");
    FoundPhrase f;
    f.phrase = line.substr(0, t1);
    try {
      std::size_t used = 0;
      f.count = std::stoll(line.substr(t1 + 1, t2 - t1 - 1), &used);
      f.score = std::stod(line.substr(t2 + 1), &used);
      if (used != line.size() - t2 - 1) throw std::invalid_argument("trailing");
    } catch (const std::logic_error&) {
      throw bad(n, "the count or score is not a number");
    }
    if (f.phrase.empty() || !std::isfinite(f.score))
      throw bad(n, "an empty phrase or a non-finite score");
    phrases.push_back(std::move(f));
  }
  try {
    return Phrases::frozen(std::move(o), phrases, corpusWords, countedKeys);
  } catch (const ConfigError& e) {
    throw FormatError("'" + path + "': " + e.what());
  }
}

}  // namespace posvec
