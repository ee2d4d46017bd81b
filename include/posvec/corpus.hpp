/// \file
/// CorpusSource: where the training sentences come from. Files hold raw text
/// (segmented by the tokenizer with the given options) or pre-tokenized lines
/// (one sentence a line, tokens split on ASCII whitespace, as word2vec.c reads);
/// "-" reads stdin, gzip/bzip2/xz/zstd files are decompressed (recognised from
/// their content), and a directory stands for its regular files sorted by path. Sentences already
/// in memory are used as they are, and a generator hands sentences to a sink (e.g. from a Python
/// iterable). The source only describes the corpus: it is read (streaming, in bounded memory) when
/// the trainer counts and trains.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "posvec/tokenizer.hpp"

namespace posvec {

/// A description of a training corpus: files, sentences in memory, or a
/// generator (exactly one of them). A plain value: copying it copies the paths or
/// the sentences, never file contents. Build one with the static factories.
class CorpusSource {
 public:
  /// Hands every sentence of the corpus to the sink it is given.
  /// Called once, by the counting pass, on the thread that called train(); each
  /// sentence is recorded as ids (in a temporary file) and dropped, so a generated
  /// corpus is never held in memory. Exceptions it throws propagate.
  using Generator = std::function<void(const SentenceSink&)>;

  /// Text files, read in the order given (`pretokenized`: one sentence a line,
  /// split on ASCII whitespace; otherwise segmented by a Tokenizer with `tokenizer`).
  /// InputError when `paths` is empty or names a directory without regular files.
  /// Directories are listed here (subdirectories too when `recursive`): paths()
  /// holds the files that will be read, in order; IoError when a directory cannot
  /// be listed. Files are not opened yet: a missing or unreadable one is an
  /// IoError when the trainer reads it.
  static CorpusSource fromFiles(std::vector<std::string> paths, bool pretokenized = false,
                                TokenizerOptions tokenizer = {}, bool recursive = false);
  /// Sentences already tokenized, used as they are (the source keeps its copy).
  static CorpusSource fromSentences(std::vector<Sentence> sentences);
  /// A generator of sentences (see Generator).
  /// InputError when `generate` is empty.
  static CorpusSource fromGenerator(Generator generate);

  /// The files to read, in order (directories already expanded); empty otherwise.
  const std::vector<std::string>& paths() const { return paths_; }
  /// What listing the directories left out, one line each ("'a/loop' is 'a'
  /// again"): a directory or file reached a second time through symbolic links
  /// (a cycle, or two links to one place) is read once. A front end may show it.
  const std::vector<std::string>& skippedPaths() const { return skipped_; }
  /// True when the files hold one pre-tokenized sentence a line.
  bool pretokenized() const { return pretokenized_; }
  /// The options raw-text files are tokenized with.
  const TokenizerOptions& tokenizer() const { return tokenizer_; }
  /// The in-memory sentences (fromSentences()); empty otherwise.
  const std::vector<Sentence>& sentences() const { return sentences_; }
  /// The generator (fromGenerator()); empty otherwise.
  const Generator& generator() const { return generator_; }
  /// True for fromSentences() (no files, no generator).
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
