#include "posvec/vector_math.hpp"

#include <cmath>

namespace posvec {

namespace {
template <typename T>
double cosineImpl(const T* a, const T* b, std::size_t n) {
  double dot = 0, na = 0, nb = 0;
  for (std::size_t i = 0; i < n; ++i) {
    dot += static_cast<double>(a[i]) * b[i];
    na += static_cast<double>(a[i]) * a[i];
    nb += static_cast<double>(b[i]) * b[i];
  }
  if (na == 0 || nb == 0) return 0.0;
  return dot / (std::sqrt(na) * std::sqrt(nb));
}
}  // namespace

double cosine(const float* a, const float* b, std::size_t n) { return cosineImpl(a, b, n); }
double cosine(const double* a, const double* b, std::size_t n) { return cosineImpl(a, b, n); }

}  // namespace posvec
