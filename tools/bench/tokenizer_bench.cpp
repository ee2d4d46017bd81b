// Tokenizer throughput on one text file (the Brown corpus in bench-tokenizer.sh):
// posvec's Tokenizer at 1 and 2 threads and in whitespace mode, against the
// floor of the same work done with ICU alone (one sentence pass and one word
// pass over the text, no tokens built) measured in the same run.
// With --worst-case: adversarial inputs generated in memory (runs of '.', '-',
// '\'', a chain of clitics, spaces before combining marks, text without sentence
// ends, ...), each at two sizes: linear work takes twice the time for twice the
// text, quadratic work four times.
#include <time.h>
#include <unicode/brkiter.h>
#include <unicode/utext.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "posvec/error.hpp"
#include "posvec/io.hpp"
#include "posvec/tokenizer.hpp"

namespace {

struct Timing {
  double wall = 1e30, cpu = 1e30;
};

double cpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Best wall time and best CPU time over `repeat` runs.
Timing measure(int repeat, const std::function<void()>& f) {
  Timing best;
  for (int i = 0; i < repeat; ++i) {
    const double c0 = cpuSeconds();
    const auto t0 = std::chrono::steady_clock::now();
    f();
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best.wall = std::min(best.wall, wall);
    best.cpu = std::min(best.cpu, cpuSeconds() - c0);
  }
  return best;
}

// Repeats `unit` (after `head`) up to about `bytes` bytes.
std::string repeated(const std::string& head, const std::string& unit, std::size_t bytes) {
  std::string s = head;
  s.reserve(bytes + unit.size());
  while (s.size() < bytes) s += unit;
  return s;
}

int worstCase(std::size_t megabytes, int repeat) {
  struct Input {
    const char* name;
    std::string head, unit;
  };
  const std::vector<Input> inputs{
      {"run of '.'", "x ", "."},
      {"run of '-'", "x ", "-"},
      {"run of apostrophes (')", "x ", "'"},
      {"run of '.' (non-ASCII: ICU words)", "\xC3\xA9 ", "."},
      {"clitic chain a's's's...", "a", "'s"},
      {"space + combining mark", "\xC3\xA9", " \xCC\x81"},
      {"no sentence end (word word ...)", "", "word "},
      {"one word without spaces", "", "abcdefgh"},
      {"line breaks only", "a", "\n"},
      {"abbreviations (Mr. Mr. ...)", "", "Mr. "},
      {"closing quotes after a period", "", "a.'' "},
  };
  const std::size_t big = megabytes << 20, small = big / 2;
  std::printf("tokenizer_bench --worst-case: %zu MiB and %zu MiB of each input, best of %d runs\n",
              megabytes, megabytes / 2, repeat);
  std::printf("  %-36s %9s %9s %14s\n", "", "wall s", "MB/s", "t(2x) / t(x)");
  const posvec::Tokenizer tok{posvec::TokenizerOptions{}};
  for (const Input& in : inputs) {
    auto time = [&](std::size_t bytes) {
      const std::string text = repeated(in.head, in.unit, bytes);
      return measure(repeat, [&] {
        std::size_t tokens = 0;
        for (const auto& s : tok.tokenize(text)) tokens += s.size();
        if (tokens == 0 && !text.empty()) std::fprintf(stderr, "(no tokens)\n");
      });
    };
    const Timing t2 = time(big), t1 = time(small);
    std::printf("  %-36s %9.3f %9.1f %13.2fx\n", in.name, t2.wall,
                static_cast<double>(big) / 1e6 / t2.wall, t2.cpu / t1.cpu);
  }
  std::printf(
      "  (2x: linear; 4x: quadratic. The ratio uses CPU time, less noisy than wall time.)\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "--worst-case") {
    const std::size_t mb = argc > 2 ? std::max(2, std::atoi(argv[2])) : 8;
    const int repeat = argc > 3 ? std::max(1, std::atoi(argv[3])) : 3;
    try {
      return worstCase(mb, repeat);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "tokenizer_bench: error: %s\n", e.what());
      return 1;
    }
  }
  if (argc < 2) {
    std::fprintf(stderr, "usage: tokenizer_bench FILE [REPEAT] | --worst-case [MIB] [REPEAT]\n");
    return 2;
  }
  const std::string path = argv[1];
  const int repeat = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
  try {
    const std::string text = posvec::readFile(path);
    const double mb = static_cast<double>(text.size()) / 1e6;

    std::size_t sentences = 0, tokens = 0;
    auto run = [&](posvec::TokenizerOptions o) {
      const posvec::Tokenizer tok(o);
      return measure(repeat, [&] {
        sentences = tokens = 0;
        tok.tokenizeFile(path, [&](posvec::Sentence&& s) {
          ++sentences;
          tokens += s.size();
        });
      });
    };

    // The ICU floor: what the two BreakIterator passes alone cost on this text.
    std::size_t icuSentences = 0, icuWords = 0;
    const Timing icu = measure(repeat, [&] {
      UErrorCode st = U_ZERO_ERROR;
      std::unique_ptr<icu::BreakIterator> sent(
          icu::BreakIterator::createSentenceInstance(icu::Locale("en@ss=standard"), st));
      std::unique_ptr<icu::BreakIterator> word(
          icu::BreakIterator::createWordInstance(icu::Locale("en"), st));
      UText* ut = utext_openUTF8(nullptr, text.data(), static_cast<std::int64_t>(text.size()), &st);
      if (U_FAILURE(st)) throw posvec::InputError("ICU setup failed");
      sent->setText(ut, st);
      word->setText(ut, st);
      icuSentences = icuWords = 0;
      for (auto b = sent->next(); b != icu::BreakIterator::DONE; b = sent->next()) ++icuSentences;
      for (auto b = word->next(); b != icu::BreakIterator::DONE; b = word->next())
        if (word->getRuleStatus() >= UBRK_WORD_NONE_LIMIT) ++icuWords;
      utext_close(ut);
    });

    posvec::TokenizerOptions o1;
    const Timing t1 = run(o1);
    const std::size_t s1 = sentences, k1 = tokens;
    posvec::TokenizerOptions o2;
    o2.threads = 2;
    const Timing t2 = run(o2);
    posvec::TokenizerOptions ow;
    ow.mode = posvec::TokenizerOptions::Mode::Whitespace;
    const Timing tw = run(ow);

    std::printf("tokenizer_bench: %s, %.2f MB, best of %d runs\n", path.c_str(), mb, repeat);
    std::printf(
        "  posvec icu mode: %zu sentences, %zu tokens; ICU alone: %zu sentences, %zu words\n", s1,
        k1, icuSentences, icuWords);
    std::printf("  %-34s %9s %9s %12s %14s\n", "", "wall s", "MB/s", "MB/cpu-s", "vs ICU alone");
    auto row = [&](const char* name, const Timing& t) {
      std::printf("  %-34s %9.3f %9.1f %12.1f %13.2fx\n", name, t.wall, mb / t.wall, mb / t.cpu,
                  icu.wall / t.wall);
    };
    row("ICU BreakIterators alone (floor)", icu);
    row("posvec tokenizer, 1 thread", t1);
    row("posvec tokenizer, 2 threads", t2);
    row("posvec --pretokenized, 1 thread", tw);
    std::printf("  2 threads / 1 thread: %.2fx\n", t1.wall / t2.wall);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tokenizer_bench: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
