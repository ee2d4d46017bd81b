// posvec tokenize: raw UTF-8 text to one sentence a line, tokens separated by
// one space (the input format of word2vec.c, fastText and `posvec train`).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "cli.hpp"
#include "posvec/corpus.hpp"
#include "posvec/error.hpp"
#include "posvec/io.hpp"
#include "posvec/tokenizer.hpp"

namespace {

struct Options {
  std::vector<std::string> inputs;
  std::vector<std::string> files;  // the inputs with directories listed
  bool recursive = false;
  std::string output = "-";
  // Its table's rows are flags (kTokenizerSettings). The command uses every core
  // unless told otherwise (the library's default is one thread, so a program that
  // embeds it decides); the output is the same.
  posvec::TokenizerOptions tokenizer = [] {
    posvec::TokenizerOptions t;
    t.threads = 0;
    return t;
  }();
};

// Writes sentences to `out` through a buffer and reports progress.
void run(const Options& o, std::ostream& out) {
  const posvec::Tokenizer tokenizer(o.tokenizer);

  const auto start = std::chrono::steady_clock::now();
  posvec::cli::ProgressLine progress;
  std::string buf;
  std::size_t sentences = 0, tokens = 0;
  auto flush = [&] {
    out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (!out)
      throw posvec::IoError("cannot write the tokenized output (disk full or closed pipe?)");
    buf.clear();
  };
  const posvec::SentenceSink sink = [&](posvec::Sentence&& s) {
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (i) buf.push_back(' ');
      buf += s[i];
    }
    buf.push_back('\n');
    ++sentences;
    tokens += s.size();
    if (buf.size() >= (std::size_t{1} << 20)) {
      flush();
      progress.update("tokenize: " + std::to_string(sentences) + " sentences, " +
                      std::to_string(tokens) + " tokens");
    }
  };
  for (const std::string& file : o.files) tokenizer.tokenizeFile(file, sink);
  flush();
  out.flush();
  if (!out) throw posvec::IoError("cannot write the tokenized output (disk full or closed pipe?)");
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  char tail[64];
  std::snprintf(tail, sizeof tail, " in %.2f s", secs);
  progress.finish("tokenize: " + std::to_string(sentences) + " sentences, " +
                  std::to_string(tokens) + " tokens" + tail);
}

posvec::cli::Registrar reg(10, [](CLI::App& app) {
  auto o = std::make_shared<Options>();
  auto* sub = app.add_subcommand(
      "tokenize",
      "Split raw UTF-8 text into sentences and tokens (ICU), lowercased, one sentence a line");
  sub->add_option("input", o->inputs,
                  "Text files or directories to tokenize, in order; gzip, bzip2, xz and zstd are "
                  "decompressed ('-' reads standard input)")
      ->required();
  sub->add_flag("--recursive", o->recursive,
                "A directory also contributes the files of its subdirectories");
  sub->add_option("-o,--output", o->output,
                  "Output file, written atomically ('-' is standard output)")
      ->capture_default_str();
  posvec::cli::addSettings(sub, posvec::kTokenizerSettings, o->tokenizer);
  sub->callback([o] {
    const auto corpus = posvec::CorpusSource::fromFiles(o->inputs, false, {}, o->recursive);
    posvec::cli::noteSkippedPaths(corpus.skippedPaths());
    o->files = corpus.paths();
    posvec::cli::refuseOutputOverInput(o->output, "output", o->files);
    posvec::writeToPathOrStdout(o->output, [&](std::ostream& out) { run(*o, out); });
  });
});

}  // namespace
