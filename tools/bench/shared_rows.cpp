// What two threads pay for writing the same rows: the access pattern of Hogwild
// training (both threads update rows drawn from one skewed distribution, as the
// negatives and frequent words are) timed three ways, alternating, round after
// round: one table both threads write ("shared"), a table each ("private", the
// same work with nothing shared), and the shared table with its `hot` most
// frequent rows private to each thread ("hot private"). Rows of 100 floats,
// 50,000 rows, draws with probability proportional to rank^-0.75 (word2vec's
// noise distribution over a Zipf vocabulary); each access reads the row for a
// dot product and writes it back, as an update does. The ratio of shared to
// private is what sharing lines between the two cores costs; it moves with where
// the host places them, which is what the rounds show; each round ends with the
// round trip of one cache line between the two threads.
// Not a test: a benchmark helper.   shared_rows [ROUNDS] [HOT]
// `shared_rows trip` prints the line round trip alone (median of 5, ns): the
// benchmarks label each timed run with the host's state this way.
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <thread>
#include <vector>

namespace {

constexpr std::size_t kRows = 50000, kDim = 100, kDraws = 1000000;
constexpr int kPasses = 4;

void pinTo(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(static_cast<unsigned>(cpu) % CPU_SETSIZE, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);  // advice: ignored if refused
}

std::vector<std::uint32_t> draws(std::uint64_t seed) {
  std::vector<double> cdf(kRows);
  double total = 0;
  for (std::size_t i = 0; i < kRows; ++i) cdf[i] = total += std::pow(double(i + 1), -0.75);
  std::vector<std::uint32_t> ids(kDraws);
  std::uint64_t x = seed;
  for (auto& id : ids) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const double u = double(x >> 11) * 0x1p-53 * total;
    id = static_cast<std::uint32_t>(std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
  }
  return ids;
}

// Seconds for kPasses passes over `ids`, rows below `hot` from `own` when given.
double run(float* table, float* own, std::size_t hot, const std::vector<std::uint32_t>& ids,
           int cpu) {
  pinTo(cpu);
  std::vector<float> acc(kDim, 0.0f);
  const auto start = std::chrono::steady_clock::now();
  for (int pass = 0; pass < kPasses; ++pass)
    for (const std::uint32_t id : ids) {
      float* row = (own != nullptr && id < hot ? own : table) + std::size_t{id} * kDim;
      float dot = 0;
      for (std::size_t j = 0; j < kDim; ++j) dot += row[j] * acc[j];
      const float g = 1e-3f / (1.0f + std::fabs(dot));
      for (std::size_t j = 0; j < kDim; ++j) {
        acc[j] += g * row[j];
        row[j] += g * acc[j];
      }
    }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Both threads at once; the sum of their seconds.
double pair(float* table0, float* table1, float* own0, float* own1, std::size_t hot,
            const std::vector<std::uint32_t>& ids0, const std::vector<std::uint32_t>& ids1) {
  double s0 = 0, s1 = 0;
  std::thread t0([&] { s0 = run(table0, own0, hot, ids0, 0); });
  std::thread t1([&] { s1 = run(table1, own1, hot, ids1, 1); });
  t0.join();
  t1.join();
  return s0 + s1;
}

// Round trip of one cache line between the two threads, in nanoseconds: about
// 50 ns between cores that share a cache, several times that between chiplets.
alignas(128) std::atomic<int> flag{0};  // alone in its lines: nothing else moves with it

double roundTripNs() {
  constexpr int kTrips = 200000;
  flag.store(0);
  std::thread echo([&] {
    pinTo(1);
    for (int i = 0; i < kTrips; ++i) {
      while (flag.load(std::memory_order_acquire) != 2 * i + 1) {
      }
      flag.store(2 * i + 2, std::memory_order_release);
    }
  });
  pinTo(0);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kTrips; ++i) {
    flag.store(2 * i + 1, std::memory_order_release);
    while (flag.load(std::memory_order_acquire) != 2 * i + 2) {
    }
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  echo.join();
  return s * 1e9 / kTrips;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string_view(argv[1]) == "trip") {
    std::vector<double> trips;
    for (int i = 0; i < 5; ++i) trips.push_back(roundTripNs());
    std::sort(trips.begin(), trips.end());
    std::printf("%.0f\n", trips[2]);
    return 0;
  }
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 10;
  const std::size_t hot = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 2048;
  if (rounds < 1 || hot > kRows) {
    std::fprintf(stderr, "shared_rows: usage: shared_rows [ROUNDS >= 1] [HOT <= %zu]\n", kRows);
    return 2;
  }
  const auto ids0 = draws(1), ids1 = draws(2);
  std::vector<float> shared(kRows * kDim, 0.01f), mine0 = shared, mine1 = shared;
  std::vector<float> hot0(hot * kDim, 0.01f), hot1 = hot0;
  std::printf("round   shared s  private s  hot private s   shared/private  hot private/private"
              "   line round trip   (two threads' seconds summed; hot = %zu rows)\n",
              hot);
  for (int r = 1; r <= rounds; ++r) {
    const double s = pair(shared.data(), shared.data(), nullptr, nullptr, 0, ids0, ids1);
    const double p = pair(mine0.data(), mine1.data(), nullptr, nullptr, 0, ids0, ids1);
    const double h = pair(shared.data(), shared.data(), hot0.data(), hot1.data(), hot, ids0, ids1);
    const double trip = roundTripNs();
    std::printf("%5d %10.2f %10.2f %14.2f %16.2f %20.2f %14.0f ns\n", r, s, p, h, s / p, h / p,
                trip);
    std::fflush(stdout);
  }
  return 0;
}
