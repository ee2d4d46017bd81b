#include "posvec/embeddings.hpp"

#include <catch2/catch.hpp>
#include <cmath>

#include "posvec/error.hpp"

using namespace posvec;

TEST_CASE("cosine matches the hand-derived values", "[embeddings]") {
  const float a[] = {1, 0, 0}, b[] = {1, 1, 0}, z[] = {0, 0, 0}, n[] = {-2, 0, 0};
  CHECK(cosine(a, b, 3) == Approx(1 / std::sqrt(2.0)));
  CHECK(cosine(a, n, 3) == Approx(-1.0));
  CHECK(cosine(a, z, 3) == 0.0);
}

TEST_CASE("embeddings look words up, rank neighbours and solve analogies", "[embeddings]") {
  // king - man + woman lands on queen by construction: queen = king - man + woman exactly.
  MatrixF m(5, 2);
  m << 1, 0,     // man
      0.9f, 0.3f,  // woman
      2, 1,      // king
      1.9f, 1.3f,  // queen
      -1, 0.2f;    // far
  Embeddings e({"man", "woman", "king", "queen", "far"}, m);
  CHECK(e.size() == 5);
  CHECK(e.dim() == 2);
  CHECK(e.id("king") == 2);
  CHECK_FALSE(e.find("nope"));
  CHECK_THROWS_AS(e.id("nope"), InputError);
  auto nn = e.nearest("man", 2);
  REQUIRE(nn.size() == 2);
  CHECK(nn[0].word == "woman");  // angle ~18 deg, smaller than king's ~27 deg
  CHECK(nn[0].similarity == Approx((0.9) / std::sqrt(0.81 + 0.09)).epsilon(1e-5));
  auto an = e.analogy("man", "king", "woman", 1);
  REQUIRE(an.size() == 1);
  CHECK(an[0].word == "queen");
}

TEST_CASE("embeddings reject inconsistent input", "[embeddings]") {
  MatrixF m(2, 2);
  m.setOnes();
  CHECK_THROWS_AS(Embeddings({"a"}, m), InputError);
  CHECK_THROWS_AS(Embeddings({"a", "a"}, m), InputError);
  CHECK_THROWS_AS(Embeddings({"a", "b c"}, m), InputError);
  CHECK_THROWS_AS(Embeddings({"a", "b"}, m, {1}), InputError);
}
