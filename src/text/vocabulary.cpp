#include "posvec/vocabulary.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>
#include <ostream>

#include "posvec/error.hpp"
#include "posvec/io.hpp"
#include "utf8.hpp"

namespace posvec {

void saveWord2vecVocabulary(const Vocabulary& vocabulary, std::int64_t sentences,
                            const std::string& path) {
  writeToPathOrStdout(path, [&](std::ostream& out) {
    std::string text = "</s> " + std::to_string(sentences) + "\n";
    for (std::size_t i = 0; i < vocabulary.size(); ++i) {
      const auto id = static_cast<WordId>(i);
      text += vocabulary.word(id);
      text += ' ';
      text += std::to_string(vocabulary.count(id));
      text += '\n';
    }
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  });
}

// A vocabulary file is read whole: 1 GiB holds about 50 million 'word count' lines.
constexpr std::uint64_t kMaxVocabularyFileBytes = std::uint64_t{1} << 30;

Vocabulary readWord2vecVocabulary(const std::string& path) {
  const std::string text = readFile(path, kMaxVocabularyFileBytes, "vocabulary file");
  struct Entry {
    std::string word;
    std::int64_t count;
  };
  std::vector<Entry> entries;
  std::size_t lineNo = 0, at = 0;
  // A byte-order mark (Windows editors write one) is not part of the first word.
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) at = 3;
  auto isSpace = [](char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
  };
  while (at < text.size()) {
    const std::size_t eol = std::min(text.find('\n', at), text.size());
    std::string_view line(text.data() + at, eol - at);
    at = eol + 1;
    ++lineNo;
    auto fail = [&](const std::string& what) {
      throw InputError("'" + path + "' line " + std::to_string(lineNo) + ": " + what +
                       " (a vocabulary file has one 'word count' line per word, as "
                       "word2vec.c -save-vocab writes)");
    };
    std::vector<std::string_view> fields;
    std::size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && isSpace(line[i])) ++i;
      std::size_t j = i;
      while (j < line.size() && !isSpace(line[j])) ++j;
      if (j > i) fields.push_back(line.substr(i, j - i));
      i = j;
    }
    if (fields.empty()) continue;
    if (fields.size() != 2)
      fail("expected a word and a count, found " + std::to_string(fields.size()) + " fields");
    if (!detail::isValidUtf8(fields[0])) fail("the word is not valid UTF-8");
    std::int64_t count = 0;
    const auto [end, ec] =
        std::from_chars(fields[1].data(), fields[1].data() + fields[1].size(), count);
    if (ec != std::errc() || end != fields[1].data() + fields[1].size() || count < 0)
      fail("the count '" + std::string(fields[1]) + "' is not a whole number of at least 0");
    if (fields[0] == "</s>" || count == 0) continue;
    entries.push_back({std::string(fields[0]), count});
  }
  if (entries.empty())
    throw InputError("'" + path +
                     "' holds no words (a vocabulary file has one 'word count' line per word)");
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return a.count > b.count; });
  std::vector<std::string> words;
  std::vector<std::int64_t> counts;
  words.reserve(entries.size());
  counts.reserve(entries.size());
  for (auto& e : entries) {
    words.push_back(std::move(e.word));
    counts.push_back(e.count);
  }
  try {
    return Vocabulary(std::move(words), std::move(counts));
  } catch (const InputError& e) {
    throw InputError("'" + path + "': " + e.what());
  }
}

Vocabulary::Vocabulary(std::vector<std::string> words, std::vector<std::int64_t> counts)
    : words_(std::move(words)), counts_(std::move(counts)) {
  if (words_.size() != counts_.size())
    throw InputError("vocabulary has " + std::to_string(words_.size()) + " words but " +
                     std::to_string(counts_.size()) + " counts");
  index_.reserve(words_.size());
  for (std::size_t i = 0; i < words_.size(); ++i) {
    if (words_[i].empty()) throw InputError("vocabulary word " + std::to_string(i) + " is empty");
    if (counts_[i] <= 0)
      throw InputError("vocabulary word '" + words_[i] + "' has count " +
                       std::to_string(counts_[i]) + " (counts must be positive)");
    if (!index_.emplace(words_[i], static_cast<WordId>(i)).second)
      throw InputError("vocabulary word '" + words_[i] + "' appears twice");
    // A wrapped total would turn the subsampling thresholds into nonsense silently.
    if (__builtin_add_overflow(total_, counts_[i], &total_))
      throw InputError("vocabulary counts add up to more than 2^63 - 1 (at word " +
                       std::to_string(i) + ", '" + words_[i] +
                       "'); no corpus has that many tokens, so the counts are corrupt");
  }
}

WordId Vocabulary::find(std::string_view word) const {
  auto it = index_.find(word);
  return it == index_.end() ? -1 : it->second;
}

double Vocabulary::keepProbability(WordId id, double sample) const {
  if (sample <= 0) return 1.0;
  const double f = static_cast<double>(count(id));
  const double st = sample * static_cast<double>(total_);
  return std::min(1.0, (std::sqrt(f / st) + 1.0) * st / f);
}

VocabularyBuilder::VocabularyBuilder(std::size_t maxTableSize, std::uint64_t maxTableBytes)
    : maxTableSize_(maxTableSize), maxTableBytes_(maxTableBytes) {
  rebuildSlots(1024);
}

std::size_t VocabularyBuilder::findSlot(std::string_view word, std::uint64_t hash) const {
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
    const Slot& slot = slots_[i];
    if (slot.entry < 0) return i;
    if (slot.tag == static_cast<std::uint32_t>(hash >> 32) &&
        words_[static_cast<std::size_t>(slot.entry)] == word)
      return i;
  }
}

void VocabularyBuilder::rebuildSlots(std::size_t capacity) {
  slots_.assign(capacity, Slot{0, -1});
  const std::size_t mask = capacity - 1;
  for (std::size_t e = 0; e < words_.size(); ++e) {
    std::size_t i = hashes_[e] & mask;
    while (slots_[i].entry >= 0) i = (i + 1) & mask;
    slots_[i] = Slot{static_cast<std::uint32_t>(hashes_[e] >> 32), static_cast<std::int32_t>(e)};
  }
}

std::int32_t VocabularyBuilder::add(std::string_view word) { return addCount(word, 1); }

std::int32_t VocabularyBuilder::addCount(std::string_view word, std::int64_t count) {
  tokens_ += count;
  const std::uint64_t hash = std::hash<std::string_view>{}(word);
  const std::size_t i = findSlot(word, hash);
  if (slots_[i].entry >= 0) {
    const auto e = static_cast<std::size_t>(slots_[i].entry);
    counts_[e] += count;
    return ids_[e];
  }
  if (nextId_ == INT32_MAX)
    throw InputError("corpus has more than 2^31 distinct words; lower the input size");
  const std::int32_t id = nextId_++;
  slots_[i] =
      Slot{static_cast<std::uint32_t>(hash >> 32), static_cast<std::int32_t>(words_.size())};
  words_.emplace_back(word);
  wordBytes_ += word.size();
  hashes_.push_back(hash);
  ids_.push_back(id);
  counts_.push_back(count);
  if (2 * words_.size() > slots_.size()) rebuildSlots(2 * slots_.size());
  if ((maxTableSize_ > 0 && words_.size() > maxTableSize_) ||
      (maxTableBytes_ > 0 && bytes() > maxTableBytes_))
    prune();
  return id;
}

void VocabularyBuilder::forEachInIdOrder(
    const std::function<void(std::string_view, std::int32_t, std::int64_t)>& visit) const {
  // Entries are in id order: pruning removes some but never reorders the rest.
  for (std::size_t e = 0; e < words_.size(); ++e) visit(words_[e], ids_[e], counts_[e]);
}

void VocabularyBuilder::prune() {
  // Raise the bar until the table is comfortably below the limits again.
  auto over = [&] {
    return (maxTableSize_ > 0 && words_.size() > maxTableSize_ * 7 / 10 + 1) ||
           (maxTableBytes_ > 0 && bytes() > maxTableBytes_ / 10 * 7);
  };
  while (over() && !words_.empty()) {
    std::size_t kept = 0;
    for (std::size_t e = 0; e < words_.size(); ++e) {
      if (counts_[e] <= pruneBelow_) {
        wordBytes_ -= words_[e].size();
        continue;
      }
      if (kept != e) {
        words_[kept] = std::move(words_[e]);
        hashes_[kept] = hashes_[e];
        ids_[kept] = ids_[e];
        counts_[kept] = counts_[e];
      }
      ++kept;
    }
    words_.resize(kept);
    hashes_.resize(kept);
    ids_.resize(kept);
    counts_.resize(kept);
    ++pruneBelow_;
    ++prunings_;
  }
  rebuildSlots(slots_.size());
}

Vocabulary VocabularyBuilder::finish(std::int64_t minCount, std::size_t maxVocab,
                                     std::vector<WordId>* provisionalToFinal) {
  if (tokens_ == 0) throw InputError("the corpus contains no words");
  struct Entry {
    std::int32_t id;
    std::int64_t count;
  };
  std::vector<std::pair<const std::string*, Entry>> kept;
  std::int64_t best = 0;
  for (std::size_t e = 0; e < words_.size(); ++e) {
    best = std::max(best, counts_[e]);
    if (counts_[e] >= minCount) kept.emplace_back(&words_[e], Entry{ids_[e], counts_[e]});
  }
  if (kept.empty())
    throw InputError(ErrorText("no word occurs at least " + std::to_string(minCount) +
                               " times (the most frequent occurs " + std::to_string(best) +
                               "); lower ")
                     << Setting{"minCount", "the minimum count"} << " or give a larger corpus");
  std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
    return a.second.count != b.second.count ? a.second.count > b.second.count
                                            : a.second.id < b.second.id;
  });
  if (maxVocab > 0 && kept.size() > maxVocab) kept.resize(maxVocab);
  std::vector<std::string> words;
  std::vector<std::int64_t> counts;
  words.reserve(kept.size());
  counts.reserve(kept.size());
  if (provisionalToFinal) provisionalToFinal->assign(static_cast<std::size_t>(nextId_), -1);
  for (std::size_t i = 0; i < kept.size(); ++i) {
    words.push_back(*kept[i].first);
    counts.push_back(kept[i].second.count);
    if (provisionalToFinal)
      (*provisionalToFinal)[static_cast<std::size_t>(kept[i].second.id)] = static_cast<WordId>(i);
  }
  return Vocabulary(std::move(words), std::move(counts));
}

NoiseSampler::NoiseSampler(const std::vector<std::int64_t>& counts, double power)
    : size_(counts.size()), columns_(counts.size()) {
  const std::size_t n = counts.size();
  if (n == 0) return;
  std::vector<double> w(n);
  double sum = 0;
  for (std::size_t i = 0; i < n; ++i)
    sum += (w[i] = std::pow(static_cast<double>(counts[i]), power));
  // Scale so the mean column is 1; split columns into under- and over-full.
  std::vector<std::size_t> small, large;
  for (std::size_t i = 0; i < n; ++i) {
    w[i] = w[i] * static_cast<double>(n) / sum;
    (w[i] < 1.0 ? small : large).push_back(i);
    columns_[i].alias = static_cast<WordId>(i);
  }
  std::vector<double> keep(n, 1.0);
  while (!small.empty() && !large.empty()) {
    const std::size_t s = small.back(), l = large.back();
    small.pop_back();
    keep[s] = w[s];
    columns_[s].alias = static_cast<WordId>(l);
    w[l] -= 1.0 - w[s];
    if (w[l] < 1.0) {
      large.pop_back();
      small.push_back(l);
    }
  }
  // Leftovers are full columns up to rounding.
  for (std::size_t i = 0; i < n; ++i) {
    const double t = std::ldexp(keep[i], 32);
    columns_[i].threshold =
        t >= 4294967295.0 ? 0xFFFFFFFFu : static_cast<std::uint32_t>(std::llround(t));
    if (keep[i] >= 1.0) columns_[i].alias = static_cast<WordId>(i);
  }
}

double NoiseSampler::probability(WordId id) const {
  // A column i gives its own word with threshold/2^32 and its alias otherwise.
  double p = 0;
  for (std::size_t i = 0; i < size_; ++i) {
    const double own = std::ldexp(static_cast<double>(columns_[i].threshold), -32);
    // The column index is ((hi * n) >> 32): hi values map to columns almost evenly.
    if (static_cast<WordId>(i) == id) p += own;
    if (columns_[i].alias == id) p += 1.0 - own;
  }
  return p / static_cast<double>(size_);
}

}  // namespace posvec
