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

TEST_CASE("embeddings: norms are computed on first use and match a double reference",
          "[embeddings]") {
  MatrixF m(3, 2);
  m << 3, 4, 0, 0, -1e-3f, 2;
  const Embeddings e({"a", "b", "c"}, m);
  const Embeddings copy = e;  // shares the lazily filled cache
  for (const Embeddings* x : {&e, &copy}) {
    const Eigen::VectorXf& n = x->norms();
    REQUIRE(n.size() == 3);
    CHECK(n[0] == 5.0f);
    CHECK(n[1] == 0.0f);
    CHECK(n[2] == Approx(std::sqrt(1e-6 + 4.0)).epsilon(1e-7));
  }
  CHECK(e.find("c") == WordId{2});
  CHECK_FALSE(e.find("d").has_value());
  CHECK_FALSE(Embeddings().find("a").has_value());
}
