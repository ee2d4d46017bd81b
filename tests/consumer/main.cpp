// A downstream program that uses posvec through find_package(posvec): the whole
// pipeline, text -> tokens -> vectors -> transformer input -> study numbers.
// It is also the library example in docs/library.md.
#include <posvec/posvec.hpp>

#include <cmath>
#include <iostream>
#include <string>

int main() {
  // 1. Tokenize (ICU, lowercased, punctuation kept).
  std::string text;
  for (int i = 0; i < 200; ++i)
    text += "The black cat sat on the couch and the brown dog slept on the rug. ";
  posvec::Tokenizer tokenizer;
  std::vector<posvec::Sentence> sentences = tokenizer.tokenize(text);

  // 2. Train skip-gram vectors in memory (one thread: reproducible to the bit).
  posvec::TrainConfig config;
  config.dim = 32;
  config.minCount = 1;
  config.epochs = 2;
  config.threads = 1;
  posvec::ModelState model = posvec::train(posvec::CorpusSource::fromSentences(sentences), config);
  posvec::Embeddings vectors = posvec::embeddingsOf(model);

  // 3. Transformer input for the first sentence, positions starting at 1 as in the study.
  const posvec::Sentence& words = sentences.front();
  posvec::MatrixF rows(static_cast<Eigen::Index>(words.size()), 32);
  for (std::size_t t = 0; t < words.size(); ++t) rows.row(static_cast<Eigen::Index>(t)) = vectors.vector(words[t]);
  posvec::PositionalOptions pe;
  pe.dim = 32;
  pe.encoding = posvec::Encoding::Book;
  posvec::PositionalEncoder encoder(pe);
  posvec::MatrixD input = encoder.encode(rows, /*start=*/1);  // e * sqrt(32) + PE[1 + t]

  // 4. The study's numbers; "black" is token 1 (PE[2]), "brown" token 9 (PE[10]).
  auto pairs = posvec::studySimilarities(vectors, {{"black", 2}, {"brown", 10}},
                                         {posvec::Encoding::Book}, posvec::Scale{});
  const double direct = posvec::cosine(input.row(1).data(), input.row(9).data(), 32);
  std::cout << "word " << pairs[0].wordSimilarity << ", positional " << pairs[0].positionalSimilarity
            << ", combined "
            << pairs[0].combinedSimilarity << " (from encode: " << direct << ")\n";
  if (std::abs(direct - pairs[0].combinedSimilarity) > 1e-6) return 1;

  // Errors are posvec exceptions a program can act on.
  try {
    vectors.id("zebra");
    return 1;
  } catch (const posvec::InputError& e) {
    std::cout << "as expected: " << e.what() << "\n";
  }
  return 0;
}
