// File helpers shared by every stage: atomic output (temp file + rename, so a
// failure never leaves a truncated file behind) and checked input.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace posvec {

// Calls `write` with a stream to a temporary file beside `path`, then renames it
// over `path`. On any failure (exception from `write`, stream error, rename
// error) the temporary file is removed, `path` is untouched, and IoError (or the
// writer's own exception) is thrown. The temporary is "PATH.tmp-PID-RAND"; one
// left behind by a killed process (its PID no longer running) is removed by the
// next write of the same `path`.
void writeFileAtomically(const std::string& path, const std::function<void(std::ostream&)>& write);

// Deletes the temporary files of the atomic writes in progress, so a process that
// must exit at once (a second Ctrl-C) leaves no partial file. Async-signal-safe
// (fixed storage, atomics and unlink only): meant for a signal handler that calls
// _exit() next; the writes themselves are not told.
void removeUnfinishedTemporaries() noexcept;

// For front ends that let "-" mean standard output: "-" (or an empty path)
// streams to std::cout and throws IoError if it fails; any other path goes
// through writeFileAtomically.
void writeToPathOrStdout(const std::string& path,
                         const std::function<void(std::ostream&)>& write);

// Several files that belong together (an .npy matrix and its .vocab) as one
// transaction: every writer runs to its own temporary file, then all are renamed
// into place. If any writer or rename fails, no temporary stays behind and no
// file of the set has been replaced (except in the rare case of a rename that
// fails after another succeeded: then the renamed files are removed, so no
// mismatched set remains). Devices are written in place, after every
// temporary file succeeded.
struct AtomicWrite {
  std::string path;
  std::function<void(std::ostream&)> write;
};
void writeFilesAtomically(const std::vector<AtomicWrite>& files);

// Opens `path` for binary reading; throws IoError naming the path when it is
// missing, a directory, or unreadable.
void openForReading(const std::string& path, std::ifstream& in);

// Reads a whole (small) file into memory, with openForReading's checks; "-" reads
// stdin, and gzip, bzip2, xz or zstd content (recognised from its first bytes)
// is decompressed.
std::string readFile(const std::string& path);
/// readFile that stops at `maxBytes` (of decompressed text): a longer input (a
/// device like /dev/zero, a decompression bomb, the wrong file) throws InputError
/// naming the limit and `what` the file was meant to be ("vocabulary file").
std::string readFile(const std::string& path, std::uint64_t maxBytes, const std::string& what);

}  // namespace posvec
