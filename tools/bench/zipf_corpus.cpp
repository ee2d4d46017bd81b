// Writes a synthetic pre-tokenized corpus to stdout: WORDS tokens drawn from a
// Zipf distribution (probability of rank r proportional to 1 / r^EXPONENT) over
// VOCAB distinct words "w<rank>", in sentences of 5 to 35 words. Made to be piped
// into `posvec train - --pretokenized` (the corpus is never stored). Deterministic
// for a seed. Not a test: a benchmark helper.
//   zipf_corpus WORDS VOCAB [EXPONENT=1.0] [SEED=1]
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

std::uint64_t splitmix(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: zipf_corpus WORDS VOCAB [EXPONENT] [SEED]\n");
    return 2;
  }
  const auto words = static_cast<std::uint64_t>(std::strtod(argv[1], nullptr));
  const auto vocab = static_cast<std::uint64_t>(std::strtod(argv[2], nullptr));
  const double exponent = argc > 3 ? std::atof(argv[3]) : 1.0;
  std::uint64_t seed = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 1;
  if (words == 0 || vocab == 0 || vocab > (1ull << 31) || !(exponent > 0)) {
    std::fprintf(stderr, "zipf_corpus: WORDS and VOCAB must be positive, EXPONENT > 0\n");
    return 2;
  }
  // Walker's alias table over the ranks: O(1) per draw.
  std::vector<double> p(vocab);
  double sum = 0;
  for (std::uint64_t r = 0; r < vocab; ++r)
    sum += p[r] = std::pow(static_cast<double>(r + 1), -exponent);
  std::vector<std::uint32_t> alias(vocab);
  std::vector<double> keep(vocab);
  std::vector<std::uint32_t> small, large;
  for (std::uint64_t r = 0; r < vocab; ++r) {
    keep[r] = p[r] * static_cast<double>(vocab) / sum;
    alias[r] = static_cast<std::uint32_t>(r);
    (keep[r] < 1 ? small : large).push_back(static_cast<std::uint32_t>(r));
  }
  while (!small.empty() && !large.empty()) {
    const auto s = small.back(), l = large.back();
    small.pop_back();
    alias[s] = l;
    keep[l] -= 1 - keep[s];
    if (keep[l] < 1) {
      large.pop_back();
      small.push_back(l);
    }
  }
  for (auto r : large) keep[r] = 1;
  for (auto r : small) keep[r] = 1;

  std::string out;
  out.reserve(1 << 20);
  std::uint64_t left = words;
  char num[16];
  while (left > 0) {
    std::uint64_t len = 5 + splitmix(seed) % 31;
    len = std::min(len, left);
    left -= len;
    for (std::uint64_t i = 0; i < len; ++i) {
      const std::uint64_t bits = splitmix(seed);
      const std::uint64_t col = ((bits >> 32) * vocab) >> 32;
      const double u = static_cast<double>(bits & 0xFFFFFFFFu) * (1.0 / 4294967296.0);
      const std::uint64_t rank = u < keep[col] ? col : alias[col];
      out += 'w';
      const int n = std::snprintf(num, sizeof num, "%llu", static_cast<unsigned long long>(rank));
      out.append(num, static_cast<std::size_t>(n));
      out += i + 1 < len ? ' ' : '\n';
    }
    if (out.size() >= (1 << 20) - 512) {
      if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size()) return 1;  // reader gone
      out.clear();
    }
  }
  if (!out.empty() && std::fwrite(out.data(), 1, out.size(), stdout) != out.size()) return 1;
  return std::fflush(stdout) == 0 ? 0 : 1;
}
