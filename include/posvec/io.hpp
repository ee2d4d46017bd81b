/// \file
/// File helpers shared by every stage: atomic output (temp file + rename, so a
/// failure never leaves a truncated file behind) and checked input. Every function
/// may be called from any thread; concurrent writes must go to different paths.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace posvec {

/// Calls `write` with a stream to a temporary file beside `path`, then renames it
/// over `path`. On any failure (exception from `write`, stream error, rename
/// error) the temporary file is removed, `path` is untouched, and IoError (or the
/// writer's own exception) is thrown. The temporary is "PATH.tmp-PID-RAND"; one
/// left behind by a killed process (its PID no longer running) is removed by the
/// next write of the same `path`. A symbolic link keeps pointing where it did (the
/// file it points to is replaced); a device or pipe (e.g. /dev/stdout) is written
/// in place.
/// \throws IoError when `path` is empty or a directory, its directory does not
///         exist, or the file cannot be created, written (disk full) or renamed.
void writeFileAtomically(const std::string& path, const std::function<void(std::ostream&)>& write);

/// Deletes the temporary files of the atomic writes in progress, so a process that
/// must exit at once (a second Ctrl-C) leaves no partial file. Async-signal-safe
/// (fixed storage, atomics and unlink only): meant for a signal handler that calls
/// _exit() next; the writes themselves are not told. Covers up to 16 writes in
/// progress at once.
void removeUnfinishedTemporaries() noexcept;

/// For front ends that let "-" mean standard output: "-" (or an empty path)
/// streams to std::cout and throws IoError if it fails; any other path goes
/// through writeFileAtomically.
void writeToPathOrStdout(const std::string& path,
                         const std::function<void(std::ostream&)>& write);

/// One file of writeFilesAtomically(): where it goes and what writes it.
struct AtomicWrite {
  /// destination (a regular file, a symlink or a device)
  std::string path;
  std::function<void(std::ostream&)> write;  ///< writes the whole content to the stream it is given
};
/// Several files that belong together (an .npy matrix and its .vocab) as one
/// transaction: every writer runs to its own temporary file, then all are renamed
/// into place. If any writer or rename fails, no temporary stays behind and no
/// file of the set has been replaced: when a rename fails after another
/// succeeded, the files already renamed get their old content back (kept under a
/// second name until every rename is done), or are removed if they did not exist.
/// Devices are written in place, after every temporary file succeeded.
/// \throws IoError as writeFileAtomically() does, for the first file that fails;
///         a writer's own exception propagates unchanged.
void writeFilesAtomically(const std::vector<AtomicWrite>& files);

/// Opens `path` for binary reading into `in`; throws IoError naming the path when
/// it is missing, a directory, or unreadable. No decompression (see readFile()).
void openForReading(const std::string& path, std::ifstream& in);

/// Reads a whole (small) file into memory, with openForReading's checks; "-" reads
/// stdin, and gzip, bzip2, xz or zstd content (recognised from its first bytes)
/// is decompressed. Returns the (decompressed) bytes as they are, with no UTF-8 check.
/// \throws IoError when the file is missing, a directory, unreadable, or its
///         compressed content is corrupt.
std::string readFile(const std::string& path);
/// readFile that stops at `maxBytes` (of decompressed text): a longer input (a
/// device like /dev/zero, a decompression bomb, the wrong file) throws InputError
/// naming the limit and `what` the file was meant to be ("vocabulary file").
std::string readFile(const std::string& path, std::uint64_t maxBytes, const std::string& what);

}  // namespace posvec
