#include "posvec/io.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <ostream>

#include "posvec/error.hpp"
#include "test_util.hpp"

using namespace posvec;
namespace fs = std::filesystem;

TEST_CASE("io atomic write replaces the file only when the writer succeeds", "[io]") {
  test::TempDir dir;
  const std::string path = dir.file("out.txt");
  test::writeText(path, "old content");
  writeFileAtomically(path, [](std::ostream& out) { out << "new"; });
  CHECK(test::readText(path) == "new");

  CHECK_THROWS_AS(writeFileAtomically(path,
                                      [](std::ostream& out) {
                                        out << "half of a new file";
                                        throw InputError("writer failed midway");
                                      }),
                  InputError);
  CHECK(test::readText(path) == "new");
  // No temporary file is left behind.
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    (void)e;
    ++entries;
  }
  CHECK(entries == 1);
}

TEST_CASE("io atomic write reports unwritable targets", "[io]") {
  test::TempDir dir;
  CHECK_THROWS_AS(writeFileAtomically(dir.file("no/such/dir/out"), [](std::ostream&) {}), IoError);
  CHECK_THROWS_AS(writeFileAtomically(dir.path().string(), [](std::ostream&) {}), IoError);
  CHECK_THROWS_AS(writeFileAtomically("", [](std::ostream&) {}), IoError);
}

TEST_CASE("io atomic write writes devices in place", "[io]") {
  writeFileAtomically("/dev/null", [](std::ostream& out) { out << "discarded"; });
  CHECK(fs::is_character_file("/dev/null"));
}

TEST_CASE("io readers name the missing file or directory", "[io]") {
  test::TempDir dir;
  try {
    readFile(dir.file("missing.txt"));
    FAIL("no exception");
  } catch (const IoError& e) {
    CHECK(std::string(e.what()).find("missing.txt") != std::string::npos);
  }
  CHECK_THROWS_AS(readFile(dir.path().string()), IoError);
  test::writeText(dir.file("a"), "abc");
  CHECK(readFile(dir.file("a")) == "abc");
}

TEST_CASE("io atomic write goes through symlinks and keeps them", "[io]") {
  test::TempDir dir;
  const std::string real = dir.file("real.txt"), link = dir.file("link.txt");
  test::writeText(real, "old");
  fs::create_symlink(real, link);
  writeFileAtomically(link, [](std::ostream& out) { out << "new"; });
  CHECK(fs::is_symlink(fs::symlink_status(link)));
  CHECK(test::readText(real) == "new");
}
