// posvec phrases: collocations joined into single tokens (posvec/phrases.hpp), gensim 4's
// Phrases on the command line (Phrases::findAndJoin: the corpus counted and rewritten on
// threads); a corpus on standard input is copied to a temporary file first. --dry-run
// prints the memory bound and reads no corpus. --passes N
// repeats the whole on the previous pass's output, as word2phrase's demo runs it twice for
// trigrams.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "posvec/corpus.hpp"
#include "posvec/error.hpp"
#include "posvec/io.hpp"
#include "posvec/memory_estimate.hpp"
#include "posvec/phrases.hpp"
#include "posvec/tokenizer.hpp"

namespace posvec::cli {
namespace {

struct Options {
  std::vector<std::string> inputs;
  std::string output = "-";
  std::string table;
  std::string connectors = "none";
  int passes = 1;
  bool dryRun = false;
  PhraseOptions phrases;
  TokenizerOptions tokenizer;
};

// --connector-words: english (gensim's list), none, or a file of words (whitespace-separated).
std::vector<std::string> connectorWords(const std::string& spec) {
  if (spec == "none") return {};
  if (spec == "english") return englishConnectorWords();
  std::ifstream in(spec);
  if (!in)
    throw IoError("--connector-words: cannot open '" + spec +
                  "' (give english, none or a file of words)");
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// "12.3 MiB", "4.50 GiB".
std::string sizeText(std::uint64_t bytes) {
  char buf[32];
  if (bytes >= (std::uint64_t{1} << 30))
    std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / (1 << 30));
  else
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

// --dry-run: what the pass may hold in memory and what it would write; nothing is read.
void printDryRun(const Options& o, const PhraseOptions& po) {
  const PhraseMemoryBound b = phraseMemoryBound(po);
  std::uint64_t bytes = 0;
  std::size_t files = 0;
  bool all = true;  // every input's size known (not standard input)
  const CorpusSource corpus = CorpusSource::fromFiles(
      o.inputs, o.tokenizer.mode == TokenizerOptions::Mode::Whitespace, o.tokenizer);
  for (const std::string& path : corpus.paths()) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (path == "-" || ec) {
      all = false;
      continue;
    }
    bytes += size;
    ++files;
  }
  std::printf("corpus: %zu file%s, %s on disk%s\n", files, files == 1 ? "" : "s",
              sizeText(bytes).c_str(), all ? "" : " (and standard input, not counted)");
  std::printf(
      "memory: at most %s = %s for the counts (%d threads + the merge, %lld keys each "
      "at most: --max-vocab, %llu bytes a key) + %s of buffers\n",
      sizeText(b.total()).c_str(), sizeText(b.counts).c_str(), b.threads,
      static_cast<long long>(po.maxVocab), static_cast<unsigned long long>(b.keyBytes),
      sizeText(b.buffers).c_str());
  const std::uint64_t available = availableMemory();
  std::printf("available: %s (%s)\n", sizeText(available).c_str(),
              b.total() <= available ? "fits" : "the bound does not fit: lower --max-vocab");
  std::printf("output: about the size of the corpus's text, one sentence a line%s\n",
              o.passes > 1 ? " (each pass)" : "");
}

void run(const Options& o) {
  PhraseOptions po = o.phrases;
  po.connectorWords = connectorWords(o.connectors);
  po.validate();
  if (o.passes < 1 || o.passes > 10) throw ConfigError("--passes must be between 1 and 10");
  if (o.dryRun) return printDryRun(o, po);
  std::vector<std::string> inputs = o.inputs;
  for (auto& in : inputs) in = seekableInput(in);
  refuseOutputOverInput(o.output, "output", inputs);
  const auto start = std::chrono::steady_clock::now();
  // --pretokenized is the tokenizer table's Whitespace mode, as train reads it.
  TokenizerOptions tokenizer = o.tokenizer;
  tokenizer.threads = po.threads;
  CorpusSource corpus = CorpusSource::fromFiles(
      inputs, tokenizer.mode == TokenizerOptions::Mode::Whitespace, tokenizer);
  noteSkippedPaths(corpus.skippedPaths());
  std::string previous;  // the last pass's output, a temporary file
  std::size_t found = 0;
  std::int64_t words = 0;
  for (int pass = 1; pass <= o.passes; ++pass) {
    const bool last = pass == o.passes;
    const std::string target =
        last ? o.output : (o.output == "-" ? std::string("posvec-phrases") : o.output) +
                              ".pass" + std::to_string(pass) + ".tmp";
    std::optional<Phrases> frozen;
    writeToPathOrStdout(target,
                        [&](std::ostream& out) { frozen = Phrases::findAndJoin(corpus, po, out); });
    if (last && !globals().quiet)
      found = frozen->exportPhrases().size();  // sorts: for the log only
    words = frozen->corpusWords();
    if (last && !o.table.empty()) savePhraseTable(o.table, *frozen);
    if (!previous.empty()) std::remove(previous.c_str());
    if (!last) {
      previous = target;
      corpus = CorpusSource::fromFiles({target}, true);
    }
  }
  if (!previous.empty()) std::remove(previous.c_str());
  if (!globals().quiet) {
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "phrases: %lld words, %zu phrases in the last pass's counts; %d pass%s in %.2f s\n",
                 static_cast<long long>(words), found, o.passes, o.passes == 1 ? "" : "es", secs);
  }
}

Registrar reg(15, [](CLI::App& app) {
  auto o = std::make_shared<Options>();
  auto* sub = app.add_subcommand(
      "phrases",
      "Join frequent collocations into single tokens (new_york), as gensim's Phrases finds them; "
      "writes the corpus one sentence a line");
  sub->add_option("input", o->inputs,
                  "Corpus files or directories ('-' reads standard input); raw text goes "
                  "through the tokenizer unless --pretokenized")
      ->required();
  sub->add_option("-o,--output", o->output,
                  "The rewritten corpus, one sentence a line ('-' is standard output)")
      ->capture_default_str();
  sub->add_option("--save-table", o->table,
                  "Also write the phrases found: a settings line, then phrase, count and score "
                  "a line");
  sub->add_option("--connector-words", o->connectors,
                  "english (gensim's ENGLISH_CONNECTOR_WORDS: bank_of_america), none, or a file "
                  "of words")
      ->capture_default_str();
  sub->add_option("--passes", o->passes,
                  "Run N times, each on the last one's output (2: trigrams, as word2phrase)")
      ->capture_default_str();
  sub->add_flag("--dry-run", o->dryRun,
                "Print the memory the counts may take (--max-vocab bounds it) and read nothing");
  addSettings(sub, kPhraseSettings, o->phrases);
  // --threads (the phrase table's) runs the tokenizer too.
  addSettings(sub, kTokenizerSettings, o->tokenizer, {"tokenizerThreads"});
  sub->callback([o] { run(*o); });
});

}  // namespace
}  // namespace posvec::cli
