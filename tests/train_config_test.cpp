#include "posvec/train_config.hpp"

#include <catch2/catch.hpp>
#include <string>

#include "posvec/error.hpp"

using namespace posvec;

TEST_CASE("train config stores subword and weight settings and reads them back", "[config]") {
  TrainConfig c;
  c.subwords = true;
  c.minn = 2;
  c.maxn = 5;
  c.bucket = 12345;
  c.weights = WeightType::Bf16;
  const std::string text = c.serialize();
  // Written by hand from the key=value format: the keys a reader must find.
  CHECK(text.find("subwords=1\nminn=2\nmaxn=5\nbucket=12345\n") != std::string::npos);
  CHECK(text.find("weights=bf16\n") != std::string::npos);
  const TrainConfig back = TrainConfig::deserialize(text);
  CHECK(back.subwords);
  CHECK(back.minn == 2);
  CHECK(back.maxn == 5);
  CHECK(back.bucket == 12345u);
  CHECK(back.weights == WeightType::Bf16);
}

TEST_CASE("train config of a word-only float32 model stays readable by older readers", "[config]") {
  const std::string text = TrainConfig{}.serialize();
  CHECK(text.find("subwords") == std::string::npos);
  CHECK(text.find("weights") == std::string::npos);
  const TrainConfig back = TrainConfig::deserialize(text);
  CHECK_FALSE(back.subwords);
  CHECK(back.weights == WeightType::Fp32);
}

TEST_CASE("train config refuses impossible n-gram settings with a message naming them", "[config]") {
  TrainConfig c;
  c.subwords = true;
  c.minn = 4;
  c.maxn = 3;
  CHECK_THROWS_WITH(c.validate(), Catch::Contains("shortest character n-gram"));
  c.minn = 3;
  c.maxn = 65;
  CHECK_THROWS_WITH(c.validate(), Catch::Contains("longest character n-gram"));
  c.maxn = 6;
  c.bucket = 0;  // no n-gram rows: word vectors only (fastText's and gensim's bucket 0)
  CHECK_NOTHROW(c.validate());
  c.bucket = 1;
  CHECK_NOTHROW(c.validate());
  // n-grams off (fastText's -maxn 0): any minn is accepted.
  c.maxn = 0;
  c.minn = 9;
  CHECK_NOTHROW(c.validate());
  // Word-only training ignores the n-gram settings.
  c.subwords = false;
  c.bucket = 0;
  CHECK_NOTHROW(c.validate());
}

TEST_CASE("train config names each weight type and its size", "[config]") {
  CHECK(std::string(weightTypeName(WeightType::Fp32)) == "fp32");
  CHECK(std::string(weightTypeName(WeightType::Bf16)) == "bf16");
  CHECK(std::string(weightTypeName(WeightType::Fp16)) == "fp16");
  CHECK(weightTypeBytes(WeightType::Fp32) == 4);
  CHECK(weightTypeBytes(WeightType::Bf16) == 2);
  CHECK(weightTypeBytes(WeightType::Fp16) == 2);
  CHECK_THROWS_AS(TrainConfig::deserialize("weights=fp8\n"), FormatError);
}
