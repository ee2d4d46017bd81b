#include "posvec/study.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>

#include "position_comparison.hpp"
#include "posvec/attention.hpp"
#include "posvec/embeddings.hpp"
#include "posvec/error.hpp"
#include "posvec/formats.hpp"
#include "posvec/io.hpp"
#include "posvec/phrases.hpp"
#include "posvec/report.hpp"
#include "posvec/tokenizer.hpp"
#include "posvec/word_lookup.hpp"

namespace posvec {

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void notify(const StudyObserver& observer, const StudyProgress& p) {
  if (observer.progress) observer.progress(p);
}

// The corpus shipped with posvec: beside the running program when it is installed
// (PREFIX/bin/posvec finds PREFIX/share/posvec, whatever prefix `cmake --install`
// was given), else in the source tree, else under the configured install prefix.
std::string shippedCorpus() {
  namespace fs = std::filesystem;
  std::vector<std::string> candidates;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && exe.has_parent_path())
    candidates.push_back(
        (exe.parent_path().parent_path() / "share" / "posvec" / "posvec-corpus.txt").string());
  candidates.push_back(POSVEC_DEFAULT_CORPUS);
  candidates.push_back(POSVEC_INSTALLED_CORPUS);
  std::string looked;
  for (const std::string& p : candidates) {
    if (fs::is_regular_file(p, ec)) return p;
    looked += (looked.empty() ? "" : ", ") + p;
  }
  throw IoError("no corpus or vectors given and the shipped corpus is missing (looked at " +
                looked + "); give a corpus file or vectors");
}

std::vector<Sentence> readCorpus(const std::string& path, bool replaceInvalid,
                                 const Phrases* phrases, const StudyObserver& observer) {
  std::vector<Sentence> sentences;
  StudyProgress p;
  p.stage = StudyProgress::Stage::ReadingCorpus;
  p.path = path;
  TokenizerOptions tokenizerOptions;
  tokenizerOptions.replaceInvalid = replaceInvalid;
  Tokenizer tokenizer(tokenizerOptions);
  tokenizer.tokenizeFile(path, [&](Sentence&& s) {
    if (phrases) s = phrases->apply(s);
    p.tokens += static_cast<std::int64_t>(s.size());
    if (!s.empty()) sentences.push_back(std::move(s));
    if (sentences.size() % 4096 == 0) notify(observer, p);
  });
  p.finished = true;
  notify(observer, p);
  if (sentences.empty())
    throw InputError("corpus '" + path + "' holds no words; give a text file with sentences");
  return sentences;
}

Embeddings trainOn(const std::vector<Sentence>& sentences, const TrainConfig& config,
                   const std::string& model, const StudyObserver& observer) {
  StudyProgress p;
  p.stage = StudyProgress::Stage::Training;
  p.model = model;
  p.epochs = config.epochs;
  TrainObserver trainObserver;
  if (observer.progress)
    trainObserver.progress = [&](const TrainProgress& t) {
      p.training = t;
      observer.progress(p);
    };
  const auto start = std::chrono::steady_clock::now();
  Embeddings e = embeddingsOf(train(CorpusSource::fromSentences(sentences), config, trainObserver));
  p.stage = StudyProgress::Stage::Trained;
  p.finished = true;
  p.seconds = secondsSince(start);
  notify(observer, p);
  return e;
}

// The first `fraction` of the sentences (at least one), trained for each of
// `epochs`; the first pair measured as the study measures it (scale √d).
std::vector<TrainingPoint> trainingSweep(const std::vector<Sentence>& sentences,
                                         const TrainConfig& config, const StudyOptions& o) {
  const WordAt& a = o.pairs[0];
  const WordAt& b = o.pairs[1];
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<TrainingPoint> out;
  for (double fraction : o.sweepFractions) {
    const auto n = std::max<std::size_t>(
        1,
        static_cast<std::size_t>(std::llround(fraction * static_cast<double>(sentences.size()))));
    std::vector<Sentence> part(
        sentences.begin(),
        sentences.begin() + static_cast<std::ptrdiff_t>(std::min(n, sentences.size())));
    std::int64_t tokens = 0;
    for (const auto& s : part) tokens += static_cast<std::int64_t>(s.size());
    const CorpusSource source = CorpusSource::fromSentences(part);
    for (int e : o.sweepEpochs) {
      TrainConfig c = config;
      c.epochs = e;
      TrainingPoint t;
      t.epochs = e;
      t.fraction = fraction;
      t.sentences = part.size();
      t.tokens = tokens;
      t.wordSimilarity = nan;
      t.combinedSimilarity.assign(o.encodings.size(), nan);
      const Embeddings emb = embeddingsOf(train(source, c));
      if (emb.find(a.word) && emb.find(b.word)) {
        const auto ea = emb.vector(a.word), eb = emb.vector(b.word);
        t.wordSimilarity = cosine(ea.data(), eb.data(), emb.dim());
        const double s = std::sqrt(static_cast<double>(emb.dim()));
        for (std::size_t k = 0; k < o.encodings.size(); ++k) {
          PositionalOptions pe;
          pe.dim = emb.dim();
          pe.base = o.base;
          pe.encoding = o.encodings[k];
          t.combinedSimilarity[k] =
              combinedSimilarity(ea, a.position, eb, b.position, PositionalEncoder(pe), s);
        }
      }
      out.push_back(std::move(t));
    }
  }
  return out;
}

// The attention section of the report: the study sentence through identity
// projections (so each map is the softmax of the input rows' own similarity)
// with no positions, additive and rotary positions, the causal mask and the
// mask-after-softmax mistake, then a two-head example with random projections.
// Empty when d_model is odd (no sinusoidal encoding exists for it).
AttentionStudy attentionStudy(const Embeddings& embeddings, const StudyOptions& o) {
  AttentionStudy a;
  const std::size_t d = embeddings.dim();
  if (d % 2 != 0) return a;
  a.sentence = "The black cat sat on the couch and the brown dog slept on the rug.";
  Sentence tokens;
  for (Sentence& s : Tokenizer().tokenize(a.sentence))
    for (std::string& t : s) tokens.push_back(std::move(t));
  const LookedUp words = lookUpTokens(embeddings, tokens, UnknownWords::Token);
  a.tokens = words.tokens;
  PositionalOptions po;
  po.dim = d;
  po.base = o.base;
  const PositionalEncoder encoder(po);

  struct Setting {
    std::string key, text;
    PositionMode positional;
    bool causal, after;
    std::size_t heads;
  };
  const std::vector<Setting> settings = {
      {"attention-words", "word vectors only (no positions)", PositionMode::None, false, false, 1},
      {"attention-additive", "additive encodings (e\u00B7scale + PE)", PositionMode::Additive,
       false, false, 1},
      {"attention-rotary", "rotary position embedding on Q and K", PositionMode::Rotary, false,
       false, 1},
      {"attention-causal", "additive encodings, causal mask before the softmax",
       PositionMode::Additive, true, false, 1},
      {"attention-mask-after-softmax",
       "additive encodings, future weights zeroed after the softmax (not renormalised)",
       PositionMode::Additive, true, true, 1},
      {"attention-head",
       "additive encodings, two heads with random projections (seed " + std::to_string(o.seed) +
           ")",
       PositionMode::Additive, false, false, 2}};
  std::vector<MatrixD> wordsMap, additiveMap;
  for (const Setting& s : settings) {
    AttentionOptions ao;
    ao.heads = s.heads;
    ao.projection = s.heads > 1 ? Projection::Random : Projection::Identity;
    ao.seed = o.seed;
    ao.causal = s.causal;
    ao.maskAfterSoftmax = s.after;
    ao.positional = s.positional;
    ao.rotaryBase = o.base;
    const MatrixD x = attentionInput(words.rows, s.positional, encoder, 0, o.scale);
    const AttentionResult r = Attention(d, ao).compute(x);
    for (std::size_t h = 0; h < r.weights.size(); ++h) {
      AttentionMapResult m;
      m.key = s.heads > 1 ? s.key + "-" + std::to_string(h + 1) : s.key;
      m.setting = s.heads > 1 ? s.text + ", head " + std::to_string(h + 1) : s.text;
      m.positional = s.positional;
      m.causal = s.causal;
      m.maskAfterSoftmax = s.after;
      m.head = h;
      m.heads = s.heads;
      m.weights = r.weights[h];
      for (Eigen::Index i = 0; i < m.weights.rows(); ++i)
        m.rowSums.push_back(m.weights.row(i).sum());
      a.maps.push_back(std::move(m));
    }
    if (s.key == "attention-words") wordsMap = r.weights;
    if (s.key == "attention-additive") additiveMap = r.weights;
  }

  // The most repeated token, and how far apart its rows are with and without positions.
  std::size_t best = 0;
  for (std::size_t i = 0; i < a.tokens.size(); ++i) {
    const auto n =
        static_cast<std::size_t>(std::count(a.tokens.begin(), a.tokens.end(), a.tokens[i]));
    if (n > best) {
      best = n;
      a.repeatedWord = a.tokens[i];
    }
  }
  for (std::size_t i = 0; i < a.tokens.size(); ++i)
    if (a.tokens[i] == a.repeatedWord) a.repeatedAt.push_back(i);
  auto rowsDiff = [&](const MatrixD& w) {
    double worst = 0;
    for (std::size_t i : a.repeatedAt)
      worst = std::max(worst, (w.row(static_cast<Eigen::Index>(i)) -
                               w.row(static_cast<Eigen::Index>(a.repeatedAt[0])))
                                  .cwiseAbs()
                                  .maxCoeff());
    return worst;
  };
  a.repeatedRowsDiffWords = rowsDiff(wordsMap[0]);
  a.repeatedRowsDiffAdditive = rowsDiff(additiveMap[0]);
  return a;
}

}  // namespace

TrainConfig StudyOptions::trainConfig() const {
  TrainConfig c;
  c.dim = dim == 0 ? defaultDim() : dim;
  c.minCount = 1;  // the study's words may be rare in a small corpus
  c.architecture = Architecture::SkipGram;
  c.epochs = epochs;
  c.seed = seed;
  c.threads = threads;
  return c;
}

void StudyOptions::validate() const {
  if (!corpus.empty() && !vectors.empty())
    throw StudyOptionError(
        "vectors", "a corpus and vectors are exclusive: train from a corpus or use vectors");
  if (!phrases.empty() && !vectors.empty())
    throw StudyOptionError("studyPhrases",
                           "a phrase table joins phrases in the corpus the study trains on, "
                           "not in given vectors: name the phrase as the vectors spell it");
  if (pairs.size() < 2)
    throw StudyOptionError("pairs",
                           "the study needs at least two placed words (WORD:POSITION, e.g. "
                           "black:2 and brown:10)");
  for (const auto& w : pairs)
    if (w.word.empty() || w.position < 0)
      throw StudyOptionError(
          "pairs", "placed word '" + toString(w) + "': give a word and a non-negative position");
  if (encodings.empty()) throw StudyOptionError("encodings", "give at least one encoding");
  if (!compareModels.empty() && !comparePositions)
    throw StudyOptionError("comparePositions",
                           "models to compare need the position comparison (comparePositions)");
  for (const ComparedModel& m : compareModels) {
    try {
      m.config.validate();
    } catch (const ConfigError& e) {
      throw ConfigError(m.name + ": " + e.what());
    }
  }
  try {
    checkSettings(kStudySettings, *this);
  } catch (const ConfigError& e) {
    throw StudyOptionError(e);
  }
  for (std::size_t i = 0; i < encodings.size(); ++i)
    if (std::find(encodings.begin(), encodings.begin() + static_cast<std::ptrdiff_t>(i),
                  encodings[i]) != encodings.begin() + static_cast<std::ptrdiff_t>(i))
      throw StudyOptionError("encodings", "encoding " + encodingName(encodings[i]) +
                                              " is given twice; give each encoding once");
  PositionalOptions check;
  try {
    check.dim = dim == 0 ? defaultDim() : dim;
    check.validate();
  } catch (const ConfigError& e) {
    throw StudyOptionError("studyDim", e.what());
  }
  try {
    check.dim = PositionalOptions{}.dim;
    check.base = base;
    check.validate();
  } catch (const ConfigError& e) {
    throw StudyOptionError("base", e.what());
  }
  for (double f : sweepFractions)
    if (!(f > 0 && f <= 1))
      throw StudyOptionError("sweepFractions",
                             "corpus fraction " + std::to_string(f) + " is not in (0, 1]");
  for (int e : sweepEpochs)
    if (e < 1) throw StudyOptionError("sweepEpochs", "epochs must be at least 1");
  if (vectors.empty()) {
    try {
      trainConfig().validate();
    } catch (const ConfigError& e) {
      throw StudyOptionError("training", e.what());
    }
  }
}

namespace {

// A fastText model's vectors with a row added for each placed word its vocabulary
// lacks, built from the word's character n-grams, so that every measurement finds
// it; the words are listed in `settings`.
Embeddings withBuiltWords(const Embeddings& e, const SubwordModel& model,
                          const std::vector<WordAt>& placed, StudySettings& settings) {
  for (const auto& w : placed)
    if (!e.find(w.word) && std::find(settings.builtWords.begin(), settings.builtWords.end(),
                                     w.word) == settings.builtWords.end())
      settings.builtWords.push_back(w.word);
  if (settings.builtWords.empty()) return e;
  std::vector<std::string> words = e.words();
  MatrixF rows(static_cast<Eigen::Index>(e.size() + settings.builtWords.size()),
               static_cast<Eigen::Index>(e.dim()));
  rows.topRows(static_cast<Eigen::Index>(e.size())) = e.vectors();
  std::vector<std::int64_t> counts = e.counts();
  for (std::size_t i = 0; i < settings.builtWords.size(); ++i) {
    words.push_back(settings.builtWords[i]);
    rows.row(static_cast<Eigen::Index>(e.size() + i)) = model.vector(settings.builtWords[i]);
    if (!counts.empty()) counts.push_back(0);
  }
  return Embeddings(std::move(words), std::move(rows), std::move(counts));
}

}  // namespace

StudyResults runStudy(const StudyOptions& o, const StudyObserver& observer) {
  // Everything that can be refused is checked before any training starts.
  o.validate();
  if (!o.reportDir.empty()) {
    // The report directory too (without creating it: a refused run leaves nothing):
    // a sweep that runs for minutes must not end in "cannot create the report
    // directory" (/dev/null, a file, no permission). It exists as a writable
    // directory, or its nearest existing ancestor is one.
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path at = fs::absolute(o.reportDir, ec);
    while (!ec && !fs::exists(at, ec) && at.has_parent_path() && at.parent_path() != at)
      at = at.parent_path();
    const bool directory = !ec && fs::is_directory(at, ec);
    if (!directory || ::access(at.c_str(), W_OK) != 0)
      throw IoError("cannot create the report directory '" + o.reportDir + "': " +
                    (directory ? "'" + at.string() + "' is not writable"
                               : "'" + at.string() + "' is not a directory"));
  }

  StudyResults results;
  StudySettings& settings = results.settings;
  std::vector<Sentence> sentences;
  Embeddings embeddings;
  const TrainConfig config = o.trainConfig();
  if (!o.vectors.empty()) {
    LookupVectors loaded = loadLookupVectors(o.vectors, o.vectorsLoad);
    embeddings = std::move(loaded.vectors);
    settings.vocabulary = embeddings.size();
    if (loaded.subwords) embeddings = withBuiltWords(embeddings, *loaded.subwords, o.pairs, settings);
    if (o.dim != 0 && embeddings.dim() != o.dim)
      throw StudyOptionError("studyDim",
                             "dimension " + std::to_string(o.dim) + " does not match the " +
                                 std::to_string(embeddings.dim()) + "-d vectors in '" + o.vectors +
                                 "' (leave the dimension unset with vectors)");
    settings.source = o.vectors;
  } else {
    const std::string corpus = o.corpus.empty() ? shippedCorpus() : o.corpus;
    const std::optional<Phrases> phrases =
        o.phrases.empty() ? std::nullopt : std::optional<Phrases>(readPhraseTable(o.phrases));
    sentences = readCorpus(corpus, o.replaceInvalid, phrases ? &*phrases : nullptr, observer);
    for (const auto& s : sentences) settings.corpusTokens += static_cast<std::int64_t>(s.size());
    const auto start = std::chrono::steady_clock::now();
    embeddings = trainOn(sentences, config, std::to_string(config.dim) + "-d", observer);
    settings.vocabulary = embeddings.size();
    settings.trainSeconds = secondsSince(start);
    settings.source = corpus;
    settings.trained = true;
    settings.train = config;
  }
  for (const auto& w : o.pairs)
    if (!embeddings.find(w.word))
      throw InputError("placed word '" + toString(w) + "': the word '" + w.word +
                       "' is not in the vocabulary of " + settings.source + " (" +
                       std::to_string(embeddings.size()) + " words)");

  const bool sweep = (o.sweep || !o.reportDir.empty()) && settings.trained &&
                     settings.corpusTokens <= o.sweepMaxTokens;
  std::vector<Embeddings> smaller;
  std::vector<const Embeddings*> extra;
  if (sweep) {
    for (std::size_t d : o.decompositionDims)
      if (d < config.dim) {
        TrainConfig c = config;
        c.dim = d;
        smaller.push_back(
            trainOn(sentences, c, std::to_string(d) + "-d (decomposition)", observer));
      }
    for (const auto& e : smaller) extra.push_back(&e);
  }

  settings.dim = embeddings.dim();
  settings.base = o.base;
  settings.scale = o.scale.factor(embeddings.dim());
  settings.scaleName = scaleLabel(settings.scale, embeddings.dim());
  results.words = o.pairs;
  results.encodings = o.encodings;
  results.pairs = studySimilarities(embeddings, o.pairs, o.encodings, o.scale, o.base);
  ExperimentOptions ex;
  ex.first = o.pairs[0];
  ex.second = o.pairs[1];
  ex.encodings = o.encodings;
  ex.base = o.base;
  results.experiments = positionalExperiments(embeddings, ex, extra);
  results.attention = attentionStudy(embeddings, o);
  if (o.comparePositions) results.positions = comparePositions(embeddings, o);

  if (sweep) {
    StudyProgress p;
    p.stage = StudyProgress::Stage::TrainingSweep;
    notify(observer, p);
    results.training = trainingSweep(sentences, config, o);
    p.finished = true;
    notify(observer, p);
  }
  if (!o.reportDir.empty()) {
    StudyProgress p;
    p.stage = StudyProgress::Stage::WritingReport;
    p.path = o.reportDir;
    notify(observer, p);
    writeReport(results, o.reportDir);
    p.finished = true;
    notify(observer, p);
  }
  return results;
}

}  // namespace posvec
