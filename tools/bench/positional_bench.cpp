// positional_bench: time to build a len x dim sinusoidal matrix with
// PositionalEncoder (one thread, steady_clock, best of several runs) against a
// direct sin/cos-per-entry loop in the same run, and the max absolute error of
// both against a long-double reference at selected positions.
//
// usage: positional_bench [len=65536] [dim=512] [runs=7]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "posvec/positional.hpp"

namespace {

double seconds(const std::function<void()>& f, int runs) {
  double best = 1e300;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
  }
  return best;
}

// Interleaved reference in long double: the angle is p / base^(2k/d).
long double reference(std::int64_t p, std::size_t col, std::size_t dim, long double base) {
  const std::size_t k = col / 2;
  const long double angle =
      static_cast<long double>(p) / std::pow(base, static_cast<long double>(2 * k) / dim);
  return col % 2 == 0 ? std::sin(angle) : std::cos(angle);
}

// The common straightforward recipe in double: one sin or cos per entry.
void direct(posvec::MatrixF& m, std::int64_t start, double base) {
  const auto d = static_cast<std::size_t>(m.cols());
  std::vector<double> inv(d / 2);
  for (std::size_t k = 0; k < d / 2; ++k) inv[k] = std::pow(base, -static_cast<double>(2 * k) / d);
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    float* row = m.row(r).data();
    const double p = static_cast<double>(start + r);
    for (std::size_t k = 0; k < d / 2; ++k) {
      row[2 * k] = static_cast<float>(std::sin(p * inv[k]));
      row[2 * k + 1] = static_cast<float>(std::cos(p * inv[k]));
    }
  }
}

template <typename M>
long double maxError(const M& m, std::int64_t start, std::size_t dim, long double base) {
  long double worst = 0;
  for (Eigen::Index r = 0; r < m.rows(); ++r)
    for (std::size_t c = 0; c < dim; ++c)
      worst =
          std::max(worst, std::fabs(static_cast<long double>(m(r, static_cast<Eigen::Index>(c))) -
                                    reference(start + r, c, dim, base)));
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t len = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 65536;
  const std::size_t dim = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 512;
  const int runs = argc > 3 ? std::atoi(argv[3]) : 7;
  const double base = 10000.0;
  posvec::PositionalEncoder enc({dim, base, posvec::Encoding::Interleaved});

  posvec::MatrixF pre(static_cast<Eigen::Index>(len), static_cast<Eigen::Index>(dim));
  pre.setZero();  // touch the pages so the fill timings exclude page faults
  const double tFill = seconds([&] { enc.fill(0, pre); }, runs);
  const double tDirect = seconds([&] { direct(pre, 0, base); }, runs);
  const double tFloat = seconds(
      [&] {
        volatile auto m = enc.matrixFloat(0, len).rows();
        (void)m;
      },
      runs);
  const double tDouble = seconds(
      [&] {
        volatile auto m = enc.matrix(0, len).rows();
        (void)m;
      },
      runs);

  std::printf("matrix %zu x %zu, interleaved, base %.0f, 1 thread, best of %d runs\n", len, dim,
              base, runs);
  std::printf("  posvec fill (float32, preallocated)  %8.2f ms\n", tFill * 1e3);
  std::printf("  direct sin/cos (float32, preallocated)%8.2f ms   ratio direct/posvec %.2f\n",
              tDirect * 1e3, tDirect / tFill);
  std::printf("  posvec matrixFloat (allocates)       %8.2f ms\n", tFloat * 1e3);
  std::printf("  posvec matrix (float64, allocates)   %8.2f ms\n", tDouble * 1e3);

  // Errors: 300 rows from each position (covers every offset from a re-anchor).
  std::printf("max |error| against a long-double reference (300 rows from each position):\n");
  std::printf("  %12s %14s %14s %14s\n", "position", "posvec f64", "posvec f32", "direct f32");
  for (std::int64_t p : {std::int64_t{0}, std::int64_t{2048}, std::int64_t{65536},
                         std::int64_t{1000000}, std::int64_t{10000000}}) {
    const posvec::MatrixD md = enc.matrix(p, 300);
    const posvec::MatrixF mf = enc.matrixFloat(p, 300);
    posvec::MatrixF dm(300, static_cast<Eigen::Index>(dim));
    direct(dm, p, base);
    std::printf("  %12lld %14.3Le %14.3Le %14.3Le\n", static_cast<long long>(p),
                maxError(md, p, dim, base), maxError(mf, p, dim, base), maxError(dm, p, dim, base));
  }
  // Every 61st row of the whole matrix (61 is prime to the re-anchoring period,
  // so every offset from an anchor is visited), all columns, in double.
  const posvec::MatrixD whole = enc.matrix(0, len);
  long double worst = 0;
  for (Eigen::Index r = 0; r < whole.rows(); r += 61)
    for (std::size_t c = 0; c < dim; ++c)
      worst = std::max(worst,
                       std::fabs(static_cast<long double>(whole(r, static_cast<Eigen::Index>(c))) -
                                 reference(r, c, dim, base)));
  std::printf("  every 61st of %zu rows, float64: %.3Le\n", len, worst);
  return 0;
}
