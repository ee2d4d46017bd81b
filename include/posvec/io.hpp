// File helpers shared by every stage: atomic output (temp file + rename, so a
// failure never leaves a truncated file behind) and checked input.
#pragma once

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
// file of the set has been replaced: when a rename fails after another
// succeeded, the files already renamed get their old content back (kept under a
// second name until every rename is done), or are removed if they did not exist.
// Devices are written in place, after every temporary file succeeded.
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

}  // namespace posvec
