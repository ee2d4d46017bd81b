// Test helper for tests/python/test_fasttext_files.py: reads a fastText .bin with
// posvec and writes it with posvec's writer, the input matrix multiplied by SCALE
// and the output layer left out (zeros), so the file is posvec's own and not a
// copy of the one read.
//   posvec_fasttext_resave IN.bin OUT.bin [SCALE]
#include <cstdlib>
#include <iostream>

#include "posvec/error.hpp"
#include "posvec/subwords.hpp"

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::cerr << "usage: posvec_fasttext_resave IN.bin OUT.bin [SCALE]\n";
    return 2;
  }
  try {
    const posvec::SubwordModel m = posvec::SubwordModel::load(argv[1]);
    const float scale = argc == 4 ? std::strtof(argv[3], nullptr) : 1.0f;
    const posvec::MatrixF input = m.input() * scale;
    posvec::saveFastText(argv[2], m.words(), m.counts(), input, posvec::MatrixF(), m.args());
  } catch (const posvec::Error& e) {
    std::cerr << "posvec_fasttext_resave: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
