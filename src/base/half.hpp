// 16-bit floating point: bfloat16 (float32's sign and exponent, 7 stored fraction
// bits) and IEEE binary16 (5-bit exponent, 10 stored fraction bits), as the
// trainer stores weights in them (TrainConfig::weights). Conversions to float32
// are exact; conversions from float32 round to nearest even, or stochastically
// with given random bits (an update far below the spacing of a weight is then
// kept in expectation instead of lost). Scalar code: the same bits on every CPU;
// the trainer's AVX-512 loops compute the same functions lane by lane.
#pragma once

#include <cstdint>
#include <cstring>

namespace posvec::detail {

inline std::uint32_t floatBits(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, 4);
  return b;
}
inline float bitsFloat(std::uint32_t b) {
  float x;
  std::memcpy(&x, &b, 4);
  return x;
}

// bfloat16 is float32's upper half: widening is a shift.
inline float bf16ToFloat(std::uint16_t h) { return bitsFloat(static_cast<std::uint32_t>(h) << 16); }

// Round to nearest, ties to even; NaN stays a (quiet) NaN, overflow gives infinity.
inline std::uint16_t floatToBf16(float x) {
  const std::uint32_t b = floatBits(x);
  if ((b & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((b >> 16) | 0x40u);
  return static_cast<std::uint16_t>((b + 0x7FFFu + ((b >> 16) & 1u)) >> 16);
}

// Stochastic rounding with 16 random bits (random & 0xFFFF): the magnitude's 16
// dropped bits f (a fraction f / 2^16 of one bfloat16 step) round it up exactly when
// r >= 2^16 - f, so with uniform random bits the probability of rounding up is
// f / 2^16 and the expected result is x itself. No special case is needed: the
// largest finite magnitude rounds up to infinity, infinity stays infinity (the
// addition cannot carry out of its zero fraction's low half), and a NaN stays NaN
// or becomes infinity (a payload in the low half only): non-finite either way.
inline std::uint16_t floatToBf16Stochastic(float x, std::uint32_t random) {
  const std::uint32_t b = floatBits(x);
  return static_cast<std::uint16_t>((b + (random & 0xFFFFu)) >> 16);
}

// IEEE binary16 to float32 (exact: every half value is a float).
inline float fp16ToFloat(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1Fu, frac = h & 0x3FFu;
  if (exp == 0x1F) return bitsFloat(sign | 0x7F800000u | (frac << 13));  // inf, NaN
  if (exp != 0) return bitsFloat(sign | ((exp + 112u) << 23) | (frac << 13));
  // Zero or subnormal: frac x 2^-24, exact in float.
  const float m = static_cast<float>(frac) * (1.0f / 16777216.0f);
  return sign ? -m : m;
}

// Float32 to binary16, round to nearest even (the IEEE default); overflow gives
// infinity, NaN stays a quiet NaN.
inline std::uint16_t floatToFp16(float x) {
  const std::uint32_t b = floatBits(x);
  const auto sign = static_cast<std::uint16_t>((b >> 16) & 0x8000u);
  const std::uint32_t a = b & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return static_cast<std::uint16_t>(sign | 0x7E00u);
  if (a >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // >= 65520: inf
  if (a >= 0x38800000u) {  // a normal half (>= 2^-14)
    const std::uint32_t r = a + 0xFFFu + ((a >> 13) & 1u) - (112u << 23);
    return static_cast<std::uint16_t>(sign | (r >> 13));
  }
  // A subnormal half (or zero): the value in units of 2^-24, rounded to nearest even.
  // Exact: a < 2^-14, so a x 2^24 < 2^10 keeps every bit of a's 24-bit significand
  // above 2^-24 and the rest in the fraction.
  const float units = bitsFloat(a) * 16777216.0f;
  auto n = static_cast<std::uint32_t>(units);
  const float rest = units - static_cast<float>(n);
  if (rest > 0.5f || (rest == 0.5f && (n & 1u))) ++n;
  return static_cast<std::uint16_t>(sign | n);
}

// The spacing of binary16 values at |x| (x finite): 2^(e - 10) for x's binary
// exponent e, at least 2^-24 (the subnormals' spacing).
inline std::uint32_t fp16SpacingExponentBits(std::uint32_t absBits) {
  std::uint32_t e = absBits >> 23;  // biased float exponent
  if (e < 113) e = 113;             // 2^-14, the smallest normal half
  return e - 10;
}

// Stochastic rounding to binary16: x in units u of the spacing at |x| is q = |x| / u
// (exact: u is a power of two), rounded up when r / 2^16 < frac(q) for the 16
// random bits r = random & 0xFFFF (probability ceil(2^16 frac(q)) / 2^16), then
// converted exactly. The expected result is x to within 2^-16 of a step. Infinity
// and NaN are kept; a magnitude rounded past 65504 becomes infinity.
inline std::uint16_t floatToFp16Stochastic(float x, std::uint32_t random) {
  const std::uint32_t b = floatBits(x);
  const std::uint32_t a = b & 0x7FFFFFFFu;
  if (a >= 0x7F800000u) return floatToFp16(x);
  const std::uint32_t ue = fp16SpacingExponentBits(a);
  const float unit = bitsFloat(ue << 23), inverse = bitsFloat((254u - ue) << 23);
  const float q = bitsFloat(a) * inverse;
  const float down = static_cast<float>(static_cast<std::uint32_t>(q));  // q < 2^12
  const float frac = q - down;
  const float u = static_cast<float>(random & 0xFFFFu) * (1.0f / 65536.0f);
  const float mag = (u < frac ? down + 1.0f : down) * unit;
  return floatToFp16((b & 0x80000000u) ? -mag : mag);
}

// The random bits of one row's stochastic rounding: 16 xorshift32 streams (lanes),
// lane l started from a hash of (seed, l). The row is taken 32 values at a time:
// each block steps every lane once, value p < 16 of the block takes the low 16
// bits of lane p and value 16 + p the high 16 bits of lane p. The portable and
// AVX-512 loops draw the same bits (16 lanes = one 512-bit register).
struct RoundingBits {
  static constexpr int kLanes = 16;
  std::uint32_t lane[kLanes];
  static std::uint32_t start(std::uint32_t seed, std::uint32_t l) {
    std::uint32_t x = seed + (l + 1) * 0x9E3779B9u;
    x ^= x >> 16;
    x *= 0x7FEB352Du;
    x ^= x >> 15;
    x *= 0x846CA68Bu;
    x ^= x >> 16;
    return x | 1u;  // xorshift's state must not be 0
  }
  static std::uint32_t step(std::uint32_t x) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
  }
  explicit RoundingBits(std::uint32_t seed) {
    for (int l = 0; l < kLanes; ++l) lane[l] = start(seed, static_cast<std::uint32_t>(l));
  }
  // Steps every lane: the next block of 32 values.
  void next() {
    for (auto& x : lane) x = step(x);
  }
  // The 16 bits of value p (0..31) of the current block.
  std::uint32_t bits(int p) const {
    return p < kLanes ? lane[p] & 0xFFFFu : lane[p - kLanes] >> 16;
  }
};

}  // namespace posvec::detail
