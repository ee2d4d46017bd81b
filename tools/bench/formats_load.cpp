// Save and load times of each vector format for a random WORDS x DIM set.
//   formats_load [--words N] [--dim D] [--dir DIR] [--formats bin,text,npy,model] [--repeat R]
// Writes DIR/vectors.{bin,txt,npy,posvec} (kept, so a script can time peers on the
// same files) and prints one line per format: size, save seconds, best load seconds.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>

#include "posvec/formats.hpp"

using namespace posvec;

namespace {
double seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

int main(int argc, char** argv) {
  std::size_t words = 100000, dim = 512;
  int repeat = 3;
  std::string dir = ".", formats = "bin,text,npy,model";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--words")
      words = std::stoul(argv[i + 1]);
    else if (a == "--dim")
      dim = std::stoul(argv[i + 1]);
    else if (a == "--dir")
      dir = argv[i + 1];
    else if (a == "--formats")
      formats = argv[i + 1];
    else if (a == "--repeat")
      repeat = std::stoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "formats_load: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  std::vector<std::string> names(words);
  for (std::size_t i = 0; i < words; ++i) names[i] = std::string(1, 'w').append(std::to_string(i));
  MatrixF m(words, dim);
  std::mt19937 rng(1);
  std::normal_distribution<float> g(0.0f, 0.3f);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = g(rng);
  const Embeddings e(names, m);
  std::printf("%-6s %10s %9s %9s %10s\n", "format", "MB", "save s", "load s", "load MB/s");
  try {
    for (const char* f : {"bin", "text", "npy", "model"}) {
      if (formats.find(f) == std::string::npos) continue;
      const std::string ext = std::strcmp(f, "text") == 0    ? "txt"
                              : std::strcmp(f, "model") == 0 ? "posvec"
                                                             : f;
      const std::string path = dir + "/vectors." + ext;
      auto t0 = std::chrono::steady_clock::now();
      if (std::strcmp(f, "model") == 0) {
        ModelState s;
        s.words = names;
        s.input = m;
        s.output = MatrixF::Zero(static_cast<Eigen::Index>(words), static_cast<Eigen::Index>(dim));
        saveModel(s, path);
      } else {
        saveVectors(e, path);
      }
      const double save = seconds(t0);
      double best = 1e30;
      for (int r = 0; r < repeat; ++r) {
        t0 = std::chrono::steady_clock::now();
        const Embeddings back = loadVectors(path);
        best = std::min(best, seconds(t0));
        if (back.size() != words ||
            std::memcmp(back.vectors().data(), m.data(), sizeof(float) * m.size()) != 0) {
          std::fprintf(stderr, "formats_load: %s did not round-trip\n", f);
          return 1;
        }
      }
      const double mb = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
      std::printf("%-6s %10.1f %9.3f %9.3f %10.0f\n", f, mb, save, best, mb / best);
      std::fflush(stdout);
    }
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "formats_load: %s\n", ex.what());
    return 1;
  }
  return 0;
}
