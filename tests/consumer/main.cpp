// A downstream program that uses posvec through find_package(posvec).
#include <posvec/posvec.hpp>

#include <cmath>
#include <iostream>

int main() {
  posvec::MatrixF m(2, 3);
  m << 1, 0, 0, 1, 1, 0;
  posvec::Embeddings e({"a", "b"}, m);
  const double s = e.similarity("a", "b");
  if (std::abs(s - 1.0 / std::sqrt(2.0)) > 1e-6) {
    std::cerr << "unexpected similarity " << s << "\n";
    return 1;
  }
  try {
    e.id("missing");
    return 1;
  } catch (const posvec::InputError&) {
  }
  std::cout << "consumer ok\n";
  return 0;
}
