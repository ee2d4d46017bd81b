#include "formats_detail.hpp"

#include <filesystem>

#include "posvec/io.hpp"

namespace posvec::detail {

// Shows a word from a possibly corrupt file without flooding the terminal.
std::string shown(std::string_view word) {
  std::string out;
  for (unsigned char c : word.substr(0, 40)) out += (c < 0x20 || c == 0x7f) ? '?' : char(c);
  if (word.size() > 40) out += "...";
  return out;
}

// Writes floats as little-endian bytes.
void writeFloats(std::ostream& out, const float* data, std::size_t n) {
  if constexpr (std::endian::native == std::endian::little) {
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(n * sizeof(float)));
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      const float v = fromLittle(data[i]);
      out.write(reinterpret_cast<const char*>(&v), sizeof v);
    }
  }
}

ChunkReader::ChunkReader(const std::string& path) : path_(path) {
  openForReading(path, in_);
  std::error_code ec;
  size_ = std::filesystem::file_size(path, ec);
  if (ec) throw IoError("cannot read " + inQuotes(path) + ": " + ec.message());
  // No 4 MiB buffer for a small file (the buffer grows when a record needs it):
  // detection and loading open a file several times.
  buf_.resize(static_cast<std::size_t>(std::min<std::uint64_t>(kChunkBytes, size_ + 1)));
}

// Moves unread bytes to the front, grows the buffer to hold `need` bytes, reads more.
void ChunkReader::refill(std::size_t need) {
  if (begin_ > 0) {
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    base_ += begin_;
    end_ -= begin_;
    begin_ = 0;
  }
  if (need > buf_.size()) buf_.resize(std::max(need, buf_.size() * 2));
  in_.read(buf_.data() + end_, static_cast<std::streamsize>(buf_.size() - end_));
  const auto got = static_cast<std::size_t>(in_.gcount());
  if (in_.bad()) throw IoError("error while reading " + inQuotes(path_));
  end_ += got;
  if (got == 0 || in_.eof()) eof_ = true;
}

void checkSavable(const Embeddings& e) {
  for (std::size_t i = 0; i < e.size(); ++i) {
    if (!detail::isValidUtf8(e.words()[i]))
      throw InputError("cannot save word " + std::to_string(i + 1) + " ('" + shown(e.words()[i]) +
                       "'): it is not valid UTF-8");
    const float* row = e.vectors().row(static_cast<Eigen::Index>(i)).data();
    for (std::size_t j = 0; j < e.dim(); ++j)
      if (!std::isfinite(row[j]))
        throw InputError("cannot save the vector of '" + shown(e.words()[i]) +
                         "': it contains NaN or infinity (training diverged?)");
  }
}

}  // namespace posvec::detail
