// Helpers of the libFuzzer harnesses in this directory. The contract they check
// is the library's: on any input it returns a value or throws a posvec::Error
// subclass; any other exception (std::length_error, std::bad_alloc, a JSON or
// filesystem exception...), a sanitizer report, a hang or a huge allocation is
// a defect, and the harness aborts so that libFuzzer keeps the input.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <typeinfo>

#include "formats_detail.hpp"
#include "posvec/embeddings.hpp"
#include "posvec/error.hpp"
#include "posvec/formats.hpp"

namespace posvec::fuzz {

[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz: contract broken: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

inline void check(bool ok, const std::string& what) {
  if (!ok) fail(what);
}

// Runs f; posvec::Error is a clean refusal (returns false), anything else aborts.
template <typename F>
bool refusesCleanly(F&& f) {
  try {
    f();
    return true;
  } catch (const Error&) {
    return false;
  } catch (const std::exception& e) {
    fail(std::string("exception outside posvec::Error: ") + typeid(e).name() + ": " + e.what());
  }
}

// The loaders read files: inputs go to a directory of this process (in /dev/shm
// when there is one, so that writing them costs little), removed at exit.
class Scratch {
 public:
  Scratch() {
    std::string base = "/tmp";
    if (const char* t = std::getenv("TMPDIR"); t && *t) base = t;
    if (std::filesystem::is_directory("/dev/shm")) base = "/dev/shm";
    removeStale(base);
    std::string tmpl = base + "/posvec-fuzz-" + std::to_string(getpid()) + "-XXXXXX";
    if (!mkdtemp(tmpl.data())) fail("cannot create a scratch directory in " + base);
    dir_ = tmpl;
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // Writes `bytes` to `name` in the scratch directory and returns its path.
  std::string write(const std::string& name, std::string_view bytes) const {
    const std::string p = path(name);
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) fail("cannot write " + p);
    return p;
  }
  // A harness that crashed (abort skips destructors) left its directory behind:
  // remove those whose process is gone.
  static void removeStale(const std::string& base) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(base, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("posvec-fuzz-", 0) != 0) continue;
      const long pid = std::strtol(name.c_str() + 12, nullptr, 10);
      if (pid > 0 && kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
        std::filesystem::remove_all(entry.path(), ec);
    }
  }

  void remove(const std::string& name) const {
    std::error_code ec;
    std::filesystem::remove(dir_ / name, ec);
  }

 private:
  std::filesystem::path dir_;
};

inline const Scratch& scratch() {
  static const Scratch s;
  return s;
}

// An .npy input holds the matrix and its vocabulary file: the bytes after the
// first kVocabMark are the .vocab file (none when the mark is absent).
inline constexpr std::string_view kVocabMark = "\n#vocab#\n";

// Writes `input.npy` (+ `input.vocab`) from one fuzz input; returns the .npy path.
inline std::string writeNpyPair(std::string_view bytes, const std::string& stem = "input") {
  const auto mark = bytes.find(kVocabMark);
  const std::string npy = scratch().write(stem + ".npy", bytes.substr(0, mark));
  if (mark == std::string_view::npos)
    scratch().remove(stem + ".vocab");
  else
    scratch().write(stem + ".vocab", bytes.substr(mark + kVocabMark.size()));
  return npy;
}

// A model file whose header says it ends with a checksum gets the right one, so
// that mutated bytes reach the parser instead of stopping at the checksum (files
// without the flag, as the older seeds, are left as they are).
inline std::string withModelChecksum(std::string_view bytes) {
  std::string s(bytes);
  if (s.size() < 80 || s.compare(0, 8, "POSVECM1") != 0 || (s[12] & 1) == 0) return s;
  detail::ModelChecksum sum;
  sum.update(s.data(), s.size() - 8);
  std::uint64_t v = sum.value();
  for (int k = 0; k < 8; ++k) s[s.size() - 8 + static_cast<std::size_t>(k)] = static_cast<char>((v >> (8 * k)) & 0xFF);
  return s;
}

// What every loaded set of vectors promises (formats.hpp): at least one word,
// as many rows as words, words non-empty, without whitespace, distinct
// (Embeddings checks that when it is built), values finite.
inline void checkLoaded(const Embeddings& e) {
  check(e.size() > 0, "a vector file without words loaded");
  check(e.vectors().rows() == static_cast<Eigen::Index>(e.size()), "one row per word");
  check(e.counts().empty() || e.counts().size() == e.size(), "one count per word");
  for (const std::string& w : e.words()) {
    check(!w.empty(), "empty word loaded");
    check(w.find_first_of(" \t\n\r") == std::string::npos, "word with whitespace loaded");
  }
  const float* v = e.vectors().data();
  for (Eigen::Index i = 0; i < e.vectors().size(); ++i)
    check(std::isfinite(v[i]), "non-finite value loaded");
}

inline bool sameVectors(const Embeddings& a, const Embeddings& b) {
  return a.words() == b.words() && a.vectors().rows() == b.vectors().rows() &&
         a.vectors().cols() == b.vectors().cols() &&
         (a.vectors().size() == 0 ||
          std::memcmp(a.vectors().data(), b.vectors().data(),
                      sizeof(float) * static_cast<std::size_t>(a.vectors().size())) == 0);
}

// Loads one fuzz input as vectors of `format` (Auto: as the user's loadVectors
// does, detection included). Whatever loads keeps its promises, and saves and
// loads back bit for bit in the format it was read as (a model as binary).
inline void fuzzVectorFile(std::string_view bytes, VectorFormat format) {
  const std::string path = writeNpyPair(bytes);  // "input.npy" whatever the format
  Embeddings loaded;
  VectorFormat as = format;
  const bool ok = refusesCleanly([&] {
    if (format == VectorFormat::Auto) {
      as = detectFormat(path);
      loaded = loadVectors(path);
    } else {
      loaded = detail::loadVectorsAs(path, format);
    }
  });
  if (!ok) return;
  checkLoaded(loaded);
  if (as == VectorFormat::Model) as = VectorFormat::Word2VecBinary;
  const std::string saved = scratch().path(as == VectorFormat::Npy ? "saved.npy" : "saved");
  Embeddings again;
  const bool roundTrip = refusesCleanly([&] {
    saveVectors(loaded, saved, as);
    again = detail::loadVectorsAs(saved, as);
  });
  check(roundTrip, "vectors that loaded do not save and load back");
  check(sameVectors(loaded, again), "vectors changed in a save/load round trip");
}

}  // namespace posvec::fuzz
