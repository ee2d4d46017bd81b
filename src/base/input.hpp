// Input: opening the files users hand us. "-" is standard input; gzip, bzip2, xz
// and zstd data are recognised from their first bytes (so a pipe or a misnamed
// file works too) and decompressed by libarchive while they are read; anything
// else is read as it is. A directory given as a corpus stands for its regular
// files, sorted by name.
#pragma once

#include <cstdint>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace posvec::detail {

// A stream over the (decompressed) bytes of `path`; "-" reads stdin. IoError when
// the file is missing, a directory or unreadable; a read error, or compressed data
// that is corrupt or truncated, throws IoError naming the file from the stream's
// read (its exception mask includes badbit).
std::unique_ptr<std::istream> openInput(const std::string& path);

// Throws the IoError for a regular file whose size changed while it was read
// (another program truncating, rewriting or appending to it): `name`, its size
// when it was opened and its size now (fstat of `fd`). The same line whichever
// reader (one thread, byte ranges, blocks) finds it.
[[noreturn]] void throwChangedWhileReading(const std::string& name, int fd,
                                           std::int64_t openedSize);

// The name messages use for `path`: "<stdin>" for "-".
std::string inputName(const std::string& path);

// The compression recognised from a file's first bytes: "gzip", "bzip2", "xz",
// "zstd", or "" for none.
std::string detectCompression(const unsigned char* head, std::size_t size);
// detectCompression on the first bytes of the file at `path`; nullopt when it
// cannot be opened (the caller's own open reports why).
std::optional<std::string> fileCompression(const std::string& path);

// `paths` with every directory replaced by the regular files in it (also in its
// subdirectories when `recursive`), each directory's files sorted by path. Files
// and "-" are kept as given, in order. InputError for a directory without files.
// Symbolic links are followed, but within one directory given each directory
// (device, inode) and each file is taken once: a link back to a directory already
// read (a cycle) or a second way to the same directory or file is skipped, and
// described in `skipped` ("'a/loop' is 'a' again") when given.
std::vector<std::string> expandCorpusPaths(const std::vector<std::string>& paths, bool recursive,
                                           std::vector<std::string>* skipped = nullptr);

}  // namespace posvec::detail
