#include "posvec/io.hpp"

#include <sys/wait.h>
#include <unistd.h>

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

TEST_CASE("io atomic write removes temporaries that killed writers left behind", "[io]") {
  test::TempDir dir;
  // A PID that surely runs no process: a child that has exited and been reaped.
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) ::_exit(0);
  REQUIRE(::waitpid(child, nullptr, 0) == child);
  const std::string dead = std::to_string(child), alive = std::to_string(::getpid());
  const std::vector<std::string> stale{"out.txt.tmp-" + dead + "-12345",
                                       "out.txt.tmp-" + dead + "-9"};
  const std::vector<std::string> kept{
      "out.txt.tmp-" + alive + "-777",  // its writer may still be running
      "other.txt.tmp-" + dead + "-1",   // another output's
      "out.txt.tmp-" + dead + "-12x",   // not a name we make
      "out.txt.tmp-" + dead,            // nor this
      "out.txt.tmp-notes"};
  for (const auto& n : stale) test::writeText(dir.file(n), "half");
  for (const auto& n : kept) test::writeText(dir.file(n), "keep");
  writeFileAtomically(dir.file("out.txt"), [](std::ostream& out) { out << "new"; });
  CHECK(test::readText(dir.file("out.txt")) == "new");
  for (const auto& n : stale) CHECK_FALSE(fs::exists(dir.file(n)));
  for (const auto& n : kept) CHECK(test::readText(dir.file(n)) == "keep");
}

TEST_CASE("io a set of files is written all or nothing", "[io]") {
  test::TempDir dir;
  const std::string a = dir.file("m.npy"), b = dir.file("m.vocab");
  test::writeText(a, "old a");
  test::writeText(b, "old b");
  writeFilesAtomically({{a, [](std::ostream& out) { out << "new a"; }},
                        {b, [](std::ostream& out) { out << "new b"; }}});
  CHECK(test::readText(a) == "new a");
  CHECK(test::readText(b) == "new b");
  // The second writer fails after the first one finished: neither file changes.
  CHECK_THROWS_AS(writeFilesAtomically({{a, [](std::ostream& out) { out << "newer a"; }},
                                        {b,
                                         [](std::ostream& out) {
                                           out << "half";
                                           throw IoError("disk full");
                                         }}}),
                  IoError);
  CHECK(test::readText(a) == "new a");
  CHECK(test::readText(b) == "new b");
  // A device that fails (no space left) after the regular file was written.
  if (fs::exists("/dev/full")) {
    CHECK_THROWS_AS(
        writeFilesAtomically(
            {{a, [](std::ostream& out) { out << "newer a"; }},
             {"/dev/full", [](std::ostream& out) { out << std::string(1 << 16, 'x'); }}}),
        IoError);
    CHECK(test::readText(a) == "new a");
  }
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) entries += e.is_regular_file();
  CHECK(entries == 2);
}

TEST_CASE("io a set whose second rename fails keeps the old first file", "[io]") {
  test::TempDir dir;
  const std::string a = dir.file("m.npy"), b = dir.file("m.vocab");
  test::writeText(a, "old a");
  // The second target turns into a directory after every temporary was written
  // (another program, or a busy or immutable file): its rename fails after the
  // first one succeeded. The old first file must come back, byte for byte.
  CHECK_THROWS_AS(writeFilesAtomically({{a, [](std::ostream& out) { out << "new a"; }},
                                        {b,
                                         [&](std::ostream& out) {
                                           out << "new b";
                                           fs::create_directory(b);
                                         }}}),
                  IoError);
  CHECK(test::readText(a) == "old a");
  // The same when the first file did not exist before: it does not exist after.
  const std::string c = dir.file("n.npy"), d = dir.file("n.vocab");
  CHECK_THROWS_AS(writeFilesAtomically({{c, [](std::ostream& out) { out << "new c"; }},
                                        {d,
                                         [&](std::ostream& out) {
                                           out << "new d";
                                           fs::create_directory(d);
                                         }}}),
                  IoError);
  CHECK_FALSE(fs::exists(c));
  // No temporary or kept copy stays behind: only the old file and the two directories.
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) files += e.is_regular_file();
  CHECK(files == 1);
}

TEST_CASE("io removeUnfinishedTemporaries deletes the temporary of a write in progress", "[io]") {
  test::TempDir dir;
  const std::string path = dir.file("model.posvec");
  auto temporaries = [&] {
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir.path()))
      n += e.path().filename().string().rfind("model.posvec.tmp-", 0) == 0;
    return n;
  };
  int during = -1, after = -1;
  // What a signal handler does before _exit: the half-written file goes, and the
  // interrupted write can no longer put anything in place.
  CHECK_THROWS_AS(writeFileAtomically(path,
                                      [&](std::ostream& out) {
                                        out << "half";
                                        during = temporaries();
                                        removeUnfinishedTemporaries();
                                        after = temporaries();
                                      }),
                  IoError);
  CHECK(during == 1);
  CHECK(after == 0);
  CHECK_FALSE(std::filesystem::exists(path));
  // Finished writes are not registered any more: nothing of them is removed.
  writeFileAtomically(path, [](std::ostream& out) { out << "whole"; });
  removeUnfinishedTemporaries();
  CHECK(test::readText(path) == "whole");
}
