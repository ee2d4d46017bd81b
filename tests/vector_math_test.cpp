#include "posvec/vector_math.hpp"

#include <catch2/catch.hpp>
#include <cmath>

using namespace posvec;

TEST_CASE("cosine: hand-computed values, float and double alike", "[vector_math]") {
  // (1,2,2)·(2,0,1) = 4, |(1,2,2)| = 3, |(2,0,1)| = √5.
  const double a[] = {1, 2, 2}, b[] = {2, 0, 1};
  const float af[] = {1, 2, 2}, bf[] = {2, 0, 1};
  const double want = 4.0 / (3.0 * std::sqrt(5.0));
  CHECK(cosine(a, b, 3) == Approx(want).epsilon(1e-15));
  CHECK(cosine(af, bf, 3) == Approx(want).epsilon(1e-15));
  // Scale does not matter, sign does; orthogonal vectors give 0.
  const double a7[] = {7, 14, 14}, minusB[] = {-2, 0, -1}, ortho[] = {0, 1, -1};
  CHECK(cosine(a7, b, 3) == Approx(want).epsilon(1e-15));
  CHECK(cosine(a, minusB, 3) == Approx(-want).epsilon(1e-15));
  CHECK(cosine(a, ortho, 3) == 0.0);
  // A zero vector (or an empty one) has no direction: 0, not NaN.
  const double zero[] = {0, 0, 0};
  CHECK(cosine(a, zero, 3) == 0.0);
  CHECK(cosine(a, b, 0) == 0.0);
}
