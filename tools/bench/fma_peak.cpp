// Measured single-precision FMA throughput of this machine: the peak the
// kernel's GFLOP/s is compared with (clock, boost and the number of FMA pipes
// are measured, not assumed). Each thread runs independent chains of vector
// FMAs (more chains than latency x pipes, so the pipes never wait) on
// registers only; an FMA counts as 2 flops per lane. Prints one JSON line:
//   {"threads": T, "avx512_gflops": .., "avx2_gflops": .., "peak_gflops": max}
// Not a test: a benchmark helper.   fma_peak [THREADS] [SECONDS]
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace {

constexpr int kChains = 16;  // > 4-cycle latency x 2 pipes, and 16 + 2 registers fit

// Runs `iters` rounds of kChains FMAs; returns a value so the work is not dropped.
__attribute__((target("avx512f"), noinline)) float fma512(long iters) {
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(1.0f + 1e-3f * static_cast<float>(i));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (long n = 0; n < iters; ++n) {
#pragma GCC unroll 16
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  }
  __m512 s = acc[0];
  for (int i = 1; i < kChains; ++i) s = _mm512_add_ps(s, acc[i]);
  alignas(64) float out[16];
  _mm512_store_ps(out, s);
  float r = 0;
  for (float x : out) r += x;
  return r;
}

__attribute__((target("avx2,fma"), noinline)) float fma256(long iters) {
  __m256 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps(1.0f + 1e-3f * static_cast<float>(i));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (long n = 0; n < iters; ++n) {
#pragma GCC unroll 16
    for (int i = 0; i < kChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  }
  __m256 s = acc[0];
  for (int i = 1; i < kChains; ++i) s = _mm256_add_ps(s, acc[i]);
  alignas(32) float out[8];
  _mm256_store_ps(out, s);
  float r = 0;
  for (float x : out) r += x;
  return r;
}

// GFLOP/s of `threads` threads running `kernel` for about `seconds` (best of 3 bursts).
double measure(float (*kernel)(long), int lanes, int threads, double seconds) {
  using Clock = std::chrono::steady_clock;
  long iters = 1 << 16;
  // Calibrate on one thread: about a tenth of the wanted burst.
  for (;;) {
    const auto t0 = Clock::now();
    volatile float sink = kernel(iters);
    (void)sink;
    const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
    if (dt > seconds / 30 || iters > (1L << 40)) {
      iters = static_cast<long>(static_cast<double>(iters) * (seconds / 3) / std::max(dt, 1e-6));
      break;
    }
    iters *= 4;
  }
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = Clock::now();
    float total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
    total += kernel(iters);
    const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
    volatile float sink = total;
    (void)sink;
    const double flops = 2.0 * lanes * kChains * static_cast<double>(iters) * threads;
    best = std::max(best, flops / dt * 1e-9);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : omp_get_max_threads();
  const double seconds = argc > 2 ? std::atof(argv[2]) : 1.0;
  if (threads < 1 || seconds <= 0) {
    std::fprintf(stderr, "usage: fma_peak [THREADS] [SECONDS]\n");
    return 2;
  }
  __builtin_cpu_init();
  const bool has512 = __builtin_cpu_supports("avx512f");
  const bool has256 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const double g512 = has512 ? measure(fma512, 16, threads, seconds) : 0;
  const double g256 = has256 ? measure(fma256, 8, threads, seconds) : 0;
  std::printf(
      "{\"threads\": %d, \"avx512_gflops\": %.2f, \"avx2_gflops\": %.2f, "
      "\"peak_gflops\": %.2f}\n",
      threads, g512, g256, std::max(g512, g256));
  return 0;
}
