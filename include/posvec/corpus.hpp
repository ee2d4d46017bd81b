// CorpusSource: where the training sentences come from. Files hold raw text
// (segmented by the tokenizer with the given options) or pre-tokenized lines
// (one sentence a line, tokens split on ASCII whitespace, as word2vec.c reads);
// "-" reads stdin, gzip/bzip2/xz/zstd files are decompressed (recognised from
// their content), and a directory stands for its regular files sorted by path. Sentences already in memory are used as they are, and a
// generator hands sentences to a sink (e.g. from a Python iterable). The source
// only describes the corpus: it is read (streaming, in bounded memory) when the
// trainer counts and trains.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "posvec/tokenizer.hpp"

namespace posvec {

class CorpusSource {
 public:
  // Called once, by the counting pass, on the thread that called train(); each
  // sentence is recorded as ids (in a temporary file) and dropped, so a generated
  // corpus is never held in memory. Exceptions it throws propagate.
  using Generator = std::function<void(const SentenceSink&)>;

  // InputError when `paths` is empty or names a directory without regular files.
  // Directories are listed here (subdirectories too when `recursive`): paths()
  // holds the files that will be read, in order.
  static CorpusSource fromFiles(std::vector<std::string> paths, bool pretokenized = false,
                                TokenizerOptions tokenizer = {}, bool recursive = false);
  static CorpusSource fromSentences(std::vector<Sentence> sentences);
  // InputError when `generate` is empty.
  static CorpusSource fromGenerator(Generator generate);

  const std::vector<std::string>& paths() const { return paths_; }
  /// What listing the directories left out, one line each ("'a/loop' is 'a'
  /// again"): a directory or file reached a second time through symbolic links
  /// (a cycle, or two links to one place) is read once. A front end may show it.
  const std::vector<std::string>& skippedPaths() const { return skipped_; }
  bool pretokenized() const { return pretokenized_; }
  const TokenizerOptions& tokenizer() const { return tokenizer_; }
  const std::vector<Sentence>& sentences() const { return sentences_; }
  const Generator& generator() const { return generator_; }
  bool inMemory() const { return paths_.empty() && !generator_; }

 private:
  std::vector<std::string> paths_;
  std::vector<std::string> skipped_;
  bool pretokenized_ = false;
  TokenizerOptions tokenizer_;
  std::vector<Sentence> sentences_;
  Generator generator_;
};

}  // namespace posvec
