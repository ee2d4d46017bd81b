// File helpers shared by every stage: atomic output (temp file + rename, so a
// failure never leaves a truncated file behind) and checked input.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>

namespace posvec {

// Calls `write` with a stream to a temporary file beside `path`, then renames it
// over `path`. On any failure (exception from `write`, stream error, rename
// error) the temporary file is removed, `path` is untouched, and IoError (or the
// writer's own exception) is thrown.
void writeFileAtomically(const std::string& path, const std::function<void(std::ostream&)>& write);

// For front ends that let "-" mean standard output: "-" (or an empty path)
// streams to std::cout and throws IoError if it fails; any other path goes
// through writeFileAtomically.
void writeToPathOrStdout(const std::string& path,
                         const std::function<void(std::ostream&)>& write);

// Opens `path` for binary reading; throws IoError naming the path when it is
// missing, a directory, or unreadable.
void openForReading(const std::string& path, std::ifstream& in);

// Reads a whole (small) file into memory, with openForReading's checks.
std::string readFile(const std::string& path);

}  // namespace posvec
