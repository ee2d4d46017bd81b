// CorpusSource: where the training sentences come from. Files hold raw text
// (segmented by the tokenizer with the given options) or pre-tokenized lines
// (one sentence a line, tokens split on ASCII whitespace, as word2vec.c reads);
// "-" reads stdin. Sentences already in memory are used as they are. The source
// only describes the corpus: it is read (streaming, in bounded memory) when the
// trainer counts and trains.
#pragma once

#include <string>
#include <vector>

#include "posvec/tokenizer.hpp"

namespace posvec {

class CorpusSource {
 public:
  // InputError when `paths` is empty.
  static CorpusSource fromFiles(std::vector<std::string> paths, bool pretokenized = false,
                                TokenizerOptions tokenizer = {});
  static CorpusSource fromSentences(std::vector<Sentence> sentences);

  const std::vector<std::string>& paths() const { return paths_; }
  bool pretokenized() const { return pretokenized_; }
  const TokenizerOptions& tokenizer() const { return tokenizer_; }
  const std::vector<Sentence>& sentences() const { return sentences_; }
  bool inMemory() const { return paths_.empty(); }

 private:
  std::vector<std::string> paths_;
  bool pretokenized_ = false;
  TokenizerOptions tokenizer_;
  std::vector<Sentence> sentences_;
};

}  // namespace posvec
