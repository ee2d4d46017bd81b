// Fuzzes the counting pass (prepareCorpus) over every way a corpus arrives: a
// file at 1 and 2 threads, the same file in a directory, its gzip compression
// (1 and 2 threads: the stream counter), and standard input at 2 threads. All
// must agree: the same vocabulary, counts, sentences and id stream, or all
// refuse with the same kind of error. Input: a mode byte (bit 0 pre-tokenized,
// bit 1 replace invalid UTF-8), then the corpus bytes.
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>

#include <optional>
#include <vector>

#include "corpus_detail.hpp"
#include "fuzz_util.hpp"
#include "posvec/corpus.hpp"

namespace {

using posvec::detail::PreparedCorpus;

std::string gzipOf(std::string_view bytes) {
  archive* a = archive_write_new();
  archive_write_add_filter_gzip(a);
  archive_write_set_format_raw(a);
  std::vector<char> out(bytes.size() + bytes.size() / 8 + 4096);
  std::size_t used = 0;
  posvec::fuzz::check(archive_write_open_memory(a, out.data(), out.size(), &used) == ARCHIVE_OK,
                      "cannot open the in-memory gzip writer");
  archive_entry* e = archive_entry_new();
  archive_entry_set_filetype(e, AE_IFREG);
  archive_entry_set_size(e, static_cast<la_int64_t>(bytes.size()));
  archive_write_header(a, e);
  if (!bytes.empty()) archive_write_data(a, bytes.data(), bytes.size());
  archive_entry_free(e);
  archive_write_close(a);
  archive_write_free(a);
  out.resize(used);
  return {out.begin(), out.end()};
}

struct Outcome {
  std::optional<PreparedCorpus> counted;
  std::string refusal;  // the posvec::Error subclass when refused
};

template <typename F>
Outcome count(F&& prepare) {
  Outcome o;
  try {
    o.counted.emplace(prepare());
  } catch (const posvec::Error& e) {
    o.refusal = typeid(e).name();
  } catch (const std::exception& e) {
    posvec::fuzz::fail(std::string("exception outside posvec::Error: ") + typeid(e).name() + ": " +
                       e.what());
  }
  return o;
}

std::vector<std::int32_t> idsOf(const PreparedCorpus& p) {
  std::vector<std::int32_t> ids(static_cast<std::size_t>(p.stream.size()));
  posvec::fuzz::check(p.stream.read(0, ids.data(), ids.size()) == ids.size(), "short id stream");
  return ids;
}

void same(const Outcome& a, const Outcome& b, const std::string& what) {
  using posvec::fuzz::check;
  check(a.counted.has_value() == b.counted.has_value(),
        what + ": one counted, the other refused (" + a.refusal + b.refusal + ")");
  if (!a.counted) {
    check(a.refusal == b.refusal, what + ": refused with other errors: " + a.refusal + " / " +
                                      b.refusal);
    return;
  }
  const PreparedCorpus &x = *a.counted, &y = *b.counted;
  check(x.vocabulary.words() == y.vocabulary.words(), what + ": other words");
  check(x.vocabulary.counts() == y.vocabulary.counts(), what + ": other counts");
  check(x.tokens == y.tokens && x.sentences == y.sentences && x.distinctWords == y.distinctWords,
        what + ": other totals");
  check(idsOf(x) == idsOf(y), what + ": other id streams");
  for (int k = 0; k < 2; ++k) check(x.stream.shard(k, 2) == y.stream.shard(k, 2), what + ": shards");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace posvec;
  if (size == 0 || size > 1 << 16) return 0;
  const bool pretokenized = data[0] & 1;
  TokenizerOptions tok;
  tok.replaceInvalid = (data[0] & 2) != 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const auto& scratch = fuzz::scratch();
  std::filesystem::create_directories(scratch.path("dir"));
  const std::string file = scratch.write("dir/corpus.txt", text);
  const std::string packed = scratch.write("corpus.gz", gzipOf(text));
  auto prepare = [&](const std::vector<std::string>& paths, int threads) {
    return count([&] {
      return detail::prepareCorpus(CorpusSource::fromFiles(paths, pretokenized, tok), 1, 0,
                                   20'000'000, threads);
    });
  };
  const Outcome one = prepare({file}, 1);
  same(prepare({file}, 2), one, "a file at 2 threads");
  same(prepare({scratch.path("dir")}, 1), one, "a directory");
  same(prepare({packed}, 1), one, "gzip at 1 thread");
  same(prepare({packed}, 2), one, "gzip at 2 threads");
  // Standard input: the file on fd 0 for the time of one count.
  const int saved = ::dup(0);
  const int fd = ::open(file.c_str(), O_RDONLY);
  fuzz::check(saved >= 0 && fd >= 0 && ::dup2(fd, 0) == 0, "cannot put the corpus on stdin");
  ::close(fd);
  const Outcome piped = prepare({"-"}, 2);
  ::dup2(saved, 0);
  ::close(saved);
  same(piped, one, "stdin at 2 threads");
  return 0;
}
