// posvec: one binary, one subcommand per stage. Library errors arrive here as
// posvec exceptions and leave as one "posvec: error: ..." line and an exit code.
// main() itself is in main.cpp, so that the option-parsing fuzzer can call
// runCommandLine.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <string_view>

#include "cli.hpp"
#include "exit_code.hpp"
#include "posvec/distributed.hpp"
#include "posvec/error.hpp"
#include "posvec/io.hpp"
#include "posvec/phrases.hpp"
#include "posvec/positional.hpp"
#include "posvec/rope.hpp"
#include "posvec/setting_tables.hpp"
#include "posvec/tokenizer.hpp"

namespace posvec::cli {

namespace {
// The error line in one write: under mpirun, stderr is forwarded in the chunks it is
// written in, and a line written piece by piece can be split by mpirun's own messages.
// Through std::cerr (one insertion of the whole line), so a caller that redirects it
// (the fuzzers) still sees it.
// Always one line: a message quoting what was typed ("--dim: must not be negative
// (got -<newline>)") shows a line break or other control character in it as an escape.
void printError(const std::string& what) {
  std::string line = "posvec: error: ";
  for (const char c : what) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      line += "\\n";
    } else if (c == '\r') {
      line += "\\r";
    } else if ((u < 0x20 && c != '\t') || u == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", u);
      line += hex;
    } else {
      line += c;
    }
  }
  std::cerr << (line + "\n") << std::flush;
}
}  // namespace

std::vector<Command>& commands() {
  static std::vector<Command> list;
  return list;
}

Globals& globals() {
  static Globals g;
  return g;
}

void refuseOutputOverInput(const std::string& output, const std::string& option,
                           const std::vector<std::string>& inputs) {
  struct stat out {};
  if (output.empty() || output == "-" || ::stat(output.c_str(), &out) != 0) return;
  for (const std::string& input : inputs) {
    struct stat in {};
    if (input.empty() || input == "-" || ::stat(input.c_str(), &in) != 0) continue;
    if (in.st_dev == out.st_dev && in.st_ino == out.st_ino)
      throw ConfigError(option + " '" + output + "' is the input file '" + input +
                        "'; writing it would replace the input: choose another output file");
  }
}

void noteSkippedPaths(const std::vector<std::string>& skipped) {
  if (skipped.empty()) return;
  std::fprintf(stderr,
               "posvec: note: %s read once: %s%s (symbolic links lead to the same directory "
               "or file twice)\n",
               skipped.size() == 1 ? "a repeated path is" : "repeated paths are",
               skipped.front().c_str(),
               skipped.size() == 1 ? ""
                                   : (", and " + std::to_string(skipped.size() - 1) + " more")
                                         .c_str());
}

namespace {
// How much of standard input seekableInput's checkHead sees.
constexpr std::size_t kHeadBytes = 64;

// Where a write to `path` lands: symlinks followed (a dangling one to its target's
// name, as the atomic write does), then made absolute and normal.
std::filesystem::path landing(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(p, ec)); ++hops) {
    const fs::path to = fs::read_symlink(p, ec);
    if (ec) break;
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
  const fs::path canonical = fs::weakly_canonical(p, ec);
  return ec ? p.lexically_normal() : canonical;
}
}  // namespace

void refuseSameOutputs(const std::vector<std::pair<std::string, std::string>>& outputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const auto& [a, aName] = outputs[i];
    if (a.empty() || a == "-") continue;
    struct stat as {};
    const bool aExists = ::stat(a.c_str(), &as) == 0;
    for (std::size_t j = i + 1; j < outputs.size(); ++j) {
      const auto& [b, bName] = outputs[j];
      if (b.empty() || b == "-") continue;
      struct stat bs {};
      const bool same = (aExists && ::stat(b.c_str(), &bs) == 0 && as.st_dev == bs.st_dev &&
                         as.st_ino == bs.st_ino) ||
                        landing(a) == landing(b);
      if (same)
        throw ConfigError(aName + " '" + a + "' and " + bName + " '" + b +
                          "' are the same file; the second write would replace the first: "
                          "give them different names");
    }
  }
}

namespace {
// The temporary files that stand for standard input, and how messages name them.
std::string& stdinCopy() {
  static std::string path;
  return path;
}

// Set once something has read standard input: a second reader would find it empty.
bool& stdinTaken() {
  static bool taken = false;
  return taken;
}

void takeStdin() {
  if (stdinTaken()) throw ConfigError("only one input can be '-' (standard input) in one command");
  stdinTaken() = true;
}

std::string shown(std::string message) {
  const std::string& tmp = stdinCopy();
  if (tmp.empty()) return message;
  for (std::size_t at = message.find(tmp); at != std::string::npos; at = message.find(tmp, at + 7))
    message.replace(at, tmp.size(), "<stdin>");
  return message;
}
}  // namespace

std::vector<std::string> sentencesOf(const std::vector<std::string>& given, const std::string& inputFile) {
  std::vector<std::string> texts = given;
  if (inputFile.empty()) return texts;
  if (inputFile == "-") takeStdin();
  // Sentences to encode or attend over are read whole; attention holds a T x T map
  // per sentence, so a file near this size is already far beyond what it can run.
  constexpr std::uint64_t kMaxSentenceFileBytes = std::uint64_t{64} << 20;
  const std::string all = readFile(inputFile, kMaxSentenceFileBytes, "file of sentences");
  std::size_t pos = 0;
  while (pos < all.size()) {
    std::size_t nl = all.find('\n', pos);
    if (nl == std::string::npos) nl = all.size();
    std::string line = all.substr(pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") != std::string::npos) texts.push_back(std::move(line));
    pos = nl + 1;
  }
  return texts;
}

void addPhrasesOption(CLI::App* sub, std::string& table) {
  sub->add_option("--phrases", table,
                  "A phrase table (posvec phrases --save-table): its phrases are joined in each "
                  "sentence's tokens (new york -> new_york), as in the corpus the vectors were "
                  "trained on");
}

std::vector<std::string> textTokens(const Tokenizer& tokenizer, const std::string& text,
                                    const Phrases* phrases) {
  std::vector<std::string> tokens;
  for (Sentence& sentence : tokenizer.tokenize(text))
    for (std::string& t : sentence) tokens.push_back(std::move(t));
  return phrases ? phrases->apply(tokens) : tokens;
}

std::string seekableInput(const std::string& path,
                          const std::function<void(std::string_view head)>& checkHead) {
  if (path != "-") return path;
  takeStdin();
  const char* dir = std::getenv("TMPDIR");
  std::string tmpl = std::string(dir && *dir ? dir : "/tmp") + "/posvec-stdin-XXXXXX";
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0)
    throw IoError("cannot create a temporary file for standard input in '" +
                  std::string(dir && *dir ? dir : "/tmp") + "': " + std::strerror(errno));
  ::unlink(tmpl.c_str());  // gone with the process, however it ends
  struct Closer {  // the copy is closed when it is refused; kept open when returned
    int fd;
    bool keep = false;
    ~Closer() {
      if (!keep) ::close(fd);
    }
  } closer{fd};
  std::vector<char> buf(1 << 16);
  std::string head;  // the first bytes, for checkHead before the rest is copied
  bool checked = !checkHead;
  for (;;) {
    const ssize_t got = ::read(STDIN_FILENO, buf.data(), buf.size());
    if (got < 0) {
      if (errno == EINTR) continue;
      throw IoError(std::string("error while reading standard input: ") + std::strerror(errno));
    }
    if (!checked) {
      head.append(buf.data(), static_cast<std::size_t>(got));
      if (got == 0 || head.size() >= kHeadBytes) {
        checkHead(std::string_view(head).substr(0, kHeadBytes));
        checked = true;
      }
    }
    if (got == 0) break;
    for (ssize_t done = 0; done < got;) {
      const ssize_t w = ::write(fd, buf.data() + done, static_cast<std::size_t>(got - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0)
        throw IoError(std::string("cannot copy standard input to a temporary file: ") +
                      std::strerror(errno));
      done += w;
    }
  }
  closer.keep = true;
  stdinCopy() = "/proc/self/fd/" + std::to_string(fd);
  return stdinCopy();
}

std::string closestName(const std::string& typed, const std::vector<std::string>& names) {
  auto distance = [](const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
      std::size_t diag = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= b.size(); ++j) {
        const std::size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diag = up;
      }
    }
    return row[b.size()];
  };
  // A swap of two neighbours ("trian") counts as one edit, not two.
  auto swapped = [](const std::string& a, const std::string& b) {
    if (a.size() != b.size()) return false;
    std::size_t first = a.size(), count = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (a[i] != b[i]) {
        if (count++ == 0) first = i;
      }
    return count == 2 && first + 1 < a.size() && a[first] == b[first + 1] &&
           a[first + 1] == b[first];
  };
  const std::size_t limit = std::clamp<std::size_t>(typed.size() / 3, 1, 3);
  std::string best;
  std::size_t bestDistance = limit + 1;
  for (const std::string& name : names) {
    // Lengths further apart than the limit are further apart in edits too: no need
    // to compare a long argument with every name.
    const std::size_t gap = typed.size() > name.size() ? typed.size() - name.size()
                                                       : name.size() - typed.size();
    if (gap > limit) continue;
    const std::size_t d = swapped(typed, name) ? 1 : distance(typed, name);
    if (d < bestDistance || (d == bestDistance && !best.empty() && name.size() < best.size())) {
      best = name;
      bestDistance = d;
    }
  }
  return bestDistance <= limit ? best : std::string();
}

void writeOutput(const std::string& path, const std::string& data) {
  writeToPathOrStdout(path, [&](std::ostream& out) {
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
  });
}

std::string spelledMessage(const std::exception& e) {
  const auto* error = dynamic_cast<const Error*>(&e);
  if (!error) return e.what();
  // A setting's flag from its table row: in a sentence the row's flagInText when it
  // has one ("--no-punct to drop punctuation"), in front of the message the flag.
  const auto flagOf = [](const std::string& setting, bool inText) {
    const Spelling* s = settingSpelling(setting);
    if (!s) return std::string();
    return std::string(inText && !s->flagInText.empty() ? s->flagInText
                       : s->flag.empty()                ? s->flagInText
                                                        : s->flag);
  };
  return error->spelled([&](const std::string& s) { return flagOf(s, true); },
                        [&](const std::string& s) { return flagOf(s, false); });
}

namespace {
double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

ProgressLine::ProgressLine(double minIntervalSeconds)
    : tty_(isatty(STDERR_FILENO) != 0), interval_(minIntervalSeconds) {}

ProgressLine::~ProgressLine() {
  if (active_ && tty_) std::fputc('\n', stderr);
}

void ProgressLine::update(const std::string& text, bool force) {
  if (globals().quiet) return;
  const double t = now();
  if (tty_) {
    if (!force && t - last_ < 0.1) return;
    std::fprintf(stderr, "\r\033[K%s", text.c_str());
  } else {
    if (!force && t - last_ < interval_) return;
    std::fprintf(stderr, "%s\n", text.c_str());
  }
  std::fflush(stderr);
  last_ = t;
  active_ = true;
}

void ProgressLine::finish(const std::string& text) {
  if (globals().quiet) return;
  if (!text.empty()) update(text, true);
  if (active_ && tty_) std::fputc('\n', stderr);
  active_ = false;
}

namespace {

// Every spelling of an option of `sub` ("--dim", "-t").
std::vector<std::string> optionNames(const CLI::App* sub) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : sub->get_options()) {
    for (const std::string& l : opt->get_lnames()) names.push_back("--" + l);
    for (const std::string& s : opt->get_snames()) names.push_back("-" + s);
  }
  return names;
}

// An option of `sub`, or of the command line as a whole (-q, --quiet and --version
// may come after the command: the parser lets them fall through).
const CLI::Option* findOption(const CLI::App* sub, const std::string& name) {
  for (const CLI::App* app = sub; app != nullptr; app = app->get_parent())
    for (const CLI::Option* opt : app->get_options())
      if (opt->check_name(name)) return opt;
  return nullptr;
}

bool takesValue(const CLI::Option* opt) { return opt->get_type_size_max() > 0; }

bool isNumber(const std::string& s) {
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return !s.empty() && end && *end == '\0';
}

// gensim's parameter names (and gensim 3's), with the posvec option that means the same.
const std::vector<std::pair<std::string, std::string>> kGensimNames{
    {"vector_size", "--dim"},
    {"size", "--dim"},
    {"workers", "--threads"},
    {"min_count", "--min-count"},
    {"iter", "--epochs"},
    {"min_alpha", "--min-alpha"},
    {"max_final_vocab", "--max-vocab"},
    {"max_vocab_size", "--max-vocab"},
    {"sg", "--cbow"},
    {"dims", "--dim"},
    {"dimension", "--dim"}};

// word2vec.c's options (one dash, a value each), with posvec's spelling.
struct Word2vecOption {
  const char* name;
  const char* posvec;  // "" : the corpus (a positional argument)
};
const Word2vecOption kWord2vecOptions[] = {{"-train", ""},
                                           {"-output", "-o"},
                                           {"-size", "--dim"},
                                           {"-window", "--window"},
                                           {"-negative", "--negative"},
                                           {"-hs", "--hs"},
                                           {"-sample", "--sample"},
                                           {"-threads", "--threads"},
                                           {"-iter", "--epochs"},
                                           {"-min-count", "--min-count"},
                                           {"-alpha", "--alpha"},
                                           {"-cbow", "--cbow"},
                                           {"-binary", "--format"},
                                           {"-save-vocab", "--save-vocab"},
                                           {"-read-vocab", "--read-vocab"},
                                           {"-debug", nullptr},
                                           {"-classes", nullptr}};

const Word2vecOption* word2vecOption(const std::string& arg) {
  for (const auto& w : kWord2vecOptions)
    if (arg == w.name) return &w;
  return nullptr;
}

// A word2vec.c command line (posvec train -train c.txt -output v.bin -size 200) in
// posvec's spelling, or "" when the arguments hold no word2vec.c option. The
// translation trains what word2vec.c would: where an option is left out, word2vec.c's
// default is spelled out when posvec's differs (-size 100, -cbow 1 and with it
// -alpha 0.05, -binary 0: text). `note` gets what posvec cannot do alike (-hs 1 beside
// negative sampling: word2vec.c trains both output layers, posvec one).
std::string translateWord2vec(const std::vector<std::string>& args, std::string* note = nullptr) {
  bool any = false;
  for (const auto& a : args) any = any || (word2vecOption(a) != nullptr);
  if (!any) return {};
  auto given = [&](const char* name) -> const std::string* {
    for (std::size_t i = 0; i + 1 < args.size(); ++i)
      if (args[i] == name) return &args[i + 1];
    return nullptr;
  };
  auto on = [&](const char* name, bool byDefault) {
    const std::string* v = given(name);
    return v ? *v != "0" : byDefault;
  };
  const bool cbow = on("-cbow", true), hs = on("-hs", false), negative = on("-negative", true);
  std::string corpus, rest;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const Word2vecOption* w = word2vecOption(args[i]);
    const std::string value = i + 1 < args.size() ? args[i + 1] : "";
    if (!w) {
      rest += " " + args[i];
      continue;
    }
    ++i;
    if (!w->posvec) continue;  // nothing like it in posvec (-debug, -classes)
    const std::string to = w->posvec;
    if (to.empty())
      corpus = " " + value;
    else if (to == "--hs" || to == "--cbow")
      rest += value == "0" ? "" : " " + to;  // word2vec.c: 0 or 1
    else if (to == "--format")
      rest += value == "0" ? " --format text" : " --format bin";
    else if (to == "--negative" && hs)
      continue;  // posvec's hierarchical softmax draws no noise words
    else
      rest += " " + to + " " + value;
  }
  if (!given("-size")) rest += " --dim 100";
  if (cbow && !given("-cbow")) rest += " --cbow";
  if (cbow && !given("-alpha")) rest += " --alpha 0.05";
  if (!given("-binary")) rest += " --format text";
  if (note && hs && negative)
    *note = "word2vec.c's -hs 1 beside -negative " +
            std::string(given("-negative") ? *given("-negative") : "5") +
            " trains both output layers; posvec trains one, here hierarchical softmax, as "
            "word2vec.c's -hs 1 -negative 0";
  return "posvec train" + corpus + rest;
}

// The error a word2vec.c command line gets: its translation, and what differs.
std::string word2vecAnswer(const std::vector<std::string>& args, const std::string& where) {
  std::string note;
  const std::string translated = translateWord2vec(args, &note);
  if (translated.empty()) return {};
  return where + "these are word2vec.c's options; in posvec's spelling: " + translated +
         (note.empty() ? std::string() : " (" + note + ")");
}

// fastText's options (one dash, a value each), with posvec's spelling; nullptr: nothing
// alike in posvec (supervised or logging options).
const Word2vecOption kFastTextOptions[] = {{"-input", ""},
                                           {"-output", "-o"},
                                           {"-dim", "--dim"},
                                           {"-ws", "--window"},
                                           {"-epoch", "--epochs"},
                                           {"-minCount", "--min-count"},
                                           {"-neg", "--negative"},
                                           {"-lr", "--alpha"},
                                           {"-thread", "--threads"},
                                           {"-minn", "--minn"},
                                           {"-maxn", "--maxn"},
                                           {"-bucket", "--bucket"},
                                           {"-t", "--sample"},
                                           {"-loss", "--hs"},
                                           {"-wordNgrams", nullptr},
                                           {"-verbose", nullptr},
                                           {"-lrUpdateRate", nullptr},
                                           {"-minCountLabel", nullptr},
                                           {"-label", nullptr},
                                           {"-pretrainedVectors", nullptr},
                                           {"-saveOutput", nullptr}};

const Word2vecOption* fastTextOption(const std::string& arg) {
  for (const auto& w : kFastTextOptions)
    if (arg == w.name) return &w;
  return nullptr;
}

// An option only fastText has (-output is word2vec.c's too, -t posvec's --threads).
bool fastTextOnly(const std::string& arg) {
  return arg != "-output" && arg != "-t" && fastTextOption(arg) != nullptr;
}

// A fastText command line (fasttext skipgram -input c.txt -output ft -minn 3 ...) in
// posvec's spelling, or "" when the arguments hold no fastText-only option and
// `command` is not skipgram or cbow. fastText's defaults are spelled out where posvec's
// differ (-dim 100, -lr 0.05, -t 1e-4); the output PREFIX becomes PREFIX.bin, which a
// subword training writes in fastText's format.
std::string translateFastText(const std::string& command, const std::vector<std::string>& args,
                              std::string* note = nullptr) {
  bool any = command == "skipgram" || command == "cbow";
  for (const auto& a : args) any = any || fastTextOnly(a);
  if (!any) return {};
  auto given = [&](const char* name) -> const std::string* {
    for (std::size_t i = 0; i + 1 < args.size(); ++i)
      if (args[i] == name) return &args[i + 1];
    return nullptr;
  };
  std::string corpus, rest = " --subwords";
  std::vector<std::string> notes;
  if (command == "cbow") rest += " --cbow";
  for (std::size_t i = 0; i < args.size(); ++i) {
    const Word2vecOption* w = fastTextOption(args[i]);
    if (!w) {
      rest += " " + args[i];
      continue;
    }
    const std::string value = i + 1 < args.size() ? args[i + 1] : "";
    ++i;
    if (!w->posvec) {
      notes.push_back(std::string(w->name) + " is not used (posvec trains word vectors)");
      continue;
    }
    const std::string to = w->posvec;
    if (to.empty()) {
      corpus = " " + value;
    } else if (to == "-o") {
      rest += " -o " + value + ".bin --also-vec";  // fastText writes PREFIX.bin and PREFIX.vec
    } else if (to == "--hs") {
      if (value != "ns")
        notes.push_back("-loss " + value +
                        ": posvec's subword training uses negative sampling (-loss ns)");
    } else {
      rest += " " + to + " " + value;
    }
  }
  if (!given("-dim")) rest += " --dim 100";
  if (!given("-lr")) rest += " --alpha 0.05";
  if (!given("-t")) rest += " --sample 0.0001";
  if (note)
    for (const auto& n : notes) *note += (note->empty() ? "" : "; ") + n;
  return "posvec train" + corpus + rest;
}

// The error a fastText command line gets: its translation, and what differs.
std::string fastTextAnswer(const std::string& command, const std::vector<std::string>& args,
                           const std::string& where) {
  std::string note;
  const std::string translated = translateFastText(command, args, &note);
  if (translated.empty()) return {};
  return where + "these are fastText's options; in posvec's spelling: " + translated +
         (note.empty() ? std::string() : " (" + note + ")");
}

// fastText's commands other than training, with posvec's counterpart; "" for another word.
std::string fastTextCommand(const std::string& command) {
  if (command == "nn")
    return "'nn' is fastText's; posvec's is: posvec similar MODEL.bin WORD (without words it "
           "reads one query a line from standard input, the model loaded once)";
  if (command == "print-word-vectors")
    return "'print-word-vectors' is fastText's; posvec's is: posvec vector MODEL.bin [WORD ...] "
           "(without words it reads them from standard input)";
  if (command == "analogies")
    return "'analogies' is fastText's; posvec's is: posvec analogy MODEL.bin A B C";
  if (command == "supervised" || command == "test" || command == "predict" ||
      command == "predict-prob" || command == "quantize" || command == "test-label" ||
      command == "print-sentence-vectors" || command == "dump")
    return "'" + command +
           "' is fastText's; posvec trains and queries word vectors only (posvec train "
           "--subwords, similar, vector, analogy)";
  return {};
}

// What to change when `command` runs out of memory, as " (try ...)".
std::string outOfMemoryRemedy(const std::string& command) {
  if (command == "train")
    return " (try a smaller --max-vocab or --dim, or a larger --min-count; see "
           "docs/input-limits.md)";
  if (command == "pe" || command == "encode") return " (try a smaller --len or --dim)";
  if (command == "attend") return " (try shorter sentences or fewer --heads)";
  if (command == "similarity" || command == "similar" || command == "analogy" ||
      command == "eval")
    return " (the vectors do not fit: --limit N reads only the first N)";
  if (command == "study") return " (try a smaller --dim or corpus)";
  return "";
}
}  // namespace

std::string optionHint(const CLI::App* sub, const std::vector<std::string>& args) {
  const std::string command = sub->get_name();
  if (command == "train") {
    // fastText's first: its -output is word2vec.c's too.
    if (std::string answer = fastTextAnswer("", args, "train: "); !answer.empty()) return answer;
    if (std::string answer = word2vecAnswer(args, "train: "); !answer.empty()) return answer;
  }
  const std::vector<std::string> names = optionNames(sub);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-' || isNumber(arg)) continue;
    const std::string name = arg.substr(0, arg.find('='));
    if (const CLI::Option* known = findOption(sub, name)) {
      // Its value is not an option, whatever it looks like ("--sentence -x").
      if (takesValue(known) && name.size() == arg.size()) ++i;
      continue;
    }
    const bool single = name[1] != '-';
    if (single && name.size() == 2) continue;  // an unknown short flag: CLI11 says so
    const std::string bare = name.substr(single ? 1 : 2);
    std::string dashed = bare;
    std::replace(dashed.begin(), dashed.end(), '_', '-');
    std::string hint;
    if (findOption(sub, "--" + dashed)) {
      hint = "--" + dashed;
    } else {
      for (const auto& [gensim, posvec] : kGensimNames)
        if (bare == gensim && findOption(sub, posvec))
          hint =
              gensim == "sg" ? "--cbow (gensim's sg=0; skip-gram, sg=1, is the default)" : posvec;
    }
    // "-t4", "-k5": a short option with its value attached.
    if (hint.empty() && single && findOption(sub, name.substr(0, 2))) continue;
    if (hint.empty()) hint = closestName("--" + bare, names);
    std::string message = command + ": unknown option '" + name + "'";
    if (!hint.empty()) message += "; did you mean " + hint + "?";
    return message + " (posvec " + command + " --help lists the options)";
  }
  return {};
}

std::string parseErrorText(const CLI::ParseError& e, const CLI::App* sub) {
  const std::string what = e.what();
  const std::string command = sub ? sub->get_name() : std::string();
  const std::string help = sub ? "posvec " + command + " --help" : std::string("posvec --help");
  const std::string where = sub ? command + ": " : std::string();
  auto after = [&](const std::string& prefix) {
    const auto at = what.find(prefix);
    return at == std::string::npos ? std::string() : what.substr(at + prefix.size());
  };
  // "NAME: At Most 1 required but received 2"
  if (const auto at = what.find(": At Most "); at != std::string::npos) {
    const std::string name = what.substr(0, at);
    const std::string most = what.substr(at + 10, what.find(' ', at + 10) - at - 10);
    const std::string got = what.substr(what.rfind(' ') + 1);
    return where + name + " takes at most " + most + " value" + (most == "1" ? "" : "s") +
           ", got " + got + " (" + help + ")";
  }
  if (const auto at = what.find(": At least "); at != std::string::npos) {
    const std::string name = what.substr(0, at);
    return where + "too few values for " + name + ": " +
           what.substr(at + 11, what.find(' ', at + 11) - at - 11) + " needed (" + help + ")";
  }
  // Validators: "--top: Value 0 not in range 1 to 1000000", "--format: rain not in {a,b}".
  if (const auto at = what.find(": Value ");
      at != std::string::npos && what.find(" not in range ") != std::string::npos) {
    const auto range = what.find(" not in range ");
    const std::string value = what.substr(at + 8, range - at - 8);
    std::string bounds = what.substr(range + 14);
    if (const auto to = bounds.find(" to "); to != std::string::npos)
      bounds.replace(to, 4, " and ");
    return where + what.substr(0, at) + " must be between " + bounds + " (got " + value + ")";
  }
  if (const auto in = what.find(" not in {"); in != std::string::npos && what.find(": ") < in) {
    const auto colon = what.find(": ");
    std::string choices = what.substr(in + 9);
    if (!choices.empty() && choices.back() == '}') choices.pop_back();
    for (std::size_t c = choices.find(','); c != std::string::npos; c = choices.find(',', c + 2))
      choices.replace(c, 1, ", ");
    return where + what.substr(0, colon) + ": '" + what.substr(colon + 2, in - colon - 2) +
           "' is not one of " + choices;
  }
  if (const std::string x = after("Could not convert: "); !x.empty()) {
    const auto eq = x.find(" = ");
    return where + x.substr(0, eq) + " expects a number, got '" + x.substr(eq + 3) + "'";
  }
  if (const auto at = what.find(" is not an allowed value for "); at != std::string::npos)
    return where + what.substr(at + 29) + ": '" + what.substr(10, at - 10) + "' is not allowed (" +
           help + ")";
  if (const auto at = what.find(": too many inputs for a flag"); at != std::string::npos)
    return where + what.substr(0, at) + " is a switch and takes no value";
  if (const auto at = what.find(" excludes "); at != std::string::npos)
    return where + what.substr(0, at) + " and " + what.substr(at + 10) + " cannot be used together";
  if (const auto at = what.find(" requires "); at != std::string::npos && what.find(' ') == at)
    return where + what.substr(0, at) + " needs " + what.substr(at + 10);
  if (what == "A subcommand is required")
    return "no command given: posvec COMMAND ... (posvec --help lists the commands)";
  if (const auto at = what.find(" is required"); at != std::string::npos) {
    const std::string name = what.substr(0, at);
    return where + "missing " + (name.rfind("-", 0) == 0 ? "option " : "argument ") + name + " (" +
           help + ")";
  }
  if (const auto at = what.find(": 1 required "); at != std::string::npos)
    return where + what.substr(0, at) + " needs a value";
  if (const std::string x = after(" not expected: "); !x.empty())
    return where + "unexpected argument" +
           (what.find("arguments were") != std::string::npos ? "s" : "") + " " + x + " (" + help +
           " says what " + (sub ? command : std::string("posvec")) + " takes)";
  // posvec's own validators ("--dim: must not be negative (got -1)") already speak a
  // user's words and name the option.
  return what + " (see posvec --help)";
}

int runCommandLine(int argc, char** argv) {
  CLI::App app{"posvec: text to transformer input (tokenizer, skip-gram embeddings, "
               "sinusoidal positions, similarity analysis)"};
  stdinTaken() = false;  // one command line a run (the option fuzzer runs many)
  stdinCopy().clear();
  app.set_version_flag("--version", std::string("posvec ") + POSVEC_VERSION);
  app.add_flag("-q,--quiet", globals().quiet, "No progress output on stderr");
  app.require_subcommand(1);
  app.fallthrough();
  auto cmds = commands();
  std::stable_sort(cmds.begin(), cmds.end(), [](auto& a, auto& b) { return a.order < b.order; });
  // The subcommands each registration adds, learned once by building each on an app
  // of its own. A command line that names one command and no other builds only the
  // registration of that command: CLI11 adds an option in time proportional to the
  // options already there, and all the commands together have hundreds (the option
  // fuzzer parses thousands of command lines a second this way, not ten). Anything
  // else (help, a second command name, none) builds them all, as the parse may
  // then involve several.
  static const std::vector<std::vector<std::string>> owned = [&] {
    std::vector<std::vector<std::string>> out;
    for (auto& c : cmds) {
      CLI::App probe;
      c.add(probe);
      out.emplace_back();
      for (const CLI::App* sub : probe.get_subcommands({})) out.back().push_back(sub->get_name());
    }
    return out;
  }();
  std::vector<std::string> names;
  for (const auto& list : owned) names.insert(names.end(), list.begin(), list.end());
  names.push_back("help");
  std::size_t only = cmds.size();  // the one registration to build; cmds.size(): all
  for (int i = 1; i < argc; ++i) {
    // Help text is laid out from the whole app ("help train" and "train --help" agree).
    if (std::string_view(argv[i]) == "--help" || std::string_view(argv[i]) == "-h" ||
        std::string_view(argv[i]) == "--help-all") {
      only = cmds.size();
      break;
    }
    if (std::find(names.begin(), names.end(), argv[i]) == names.end()) continue;
    std::size_t r = 0;
    while (r < owned.size() &&
           std::find(owned[r].begin(), owned[r].end(), argv[i]) == owned[r].end())
      ++r;
    if (r == owned.size() || (only != cmds.size() && only != r)) {  // help, or a second
      only = cmds.size();
      break;
    }
    only = r;
  }
  for (std::size_t r = 0; r < cmds.size(); ++r)
    if (only == cmds.size() || r == only) cmds[r].add(app);
  // posvec help [COMMAND]: the same text as posvec COMMAND --help.
  std::string topic;
  auto* help = app.add_subcommand("help", "Show a command's options (posvec help train)");
  help->add_option("command", topic, "The command");
  auto unknown = [&](const std::string& typed) {
    const std::string near = closestName(typed, names);
    printError("unknown command '" + typed + "'" +
               (near.empty() ? std::string() : "; did you mean '" + near + "'?") +
               " (see posvec --help)");
    return static_cast<int>(ExitCode::Usage);
  };
  // The command is the first argument that is not a global flag; CLI11 alone would
  // answer a typo with "The following arguments were not expected".
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-q" || arg == "--quiet") continue;
    // word2vec.c's command line with no command ("posvec -train c.txt ..."): CLI11
    // would read "-hs" as -h s and print the help.
    if (fastTextOnly(arg)) {
      printError(fastTextAnswer("", std::vector<std::string>(argv + i, argv + argc), ""));
      return static_cast<int>(ExitCode::Usage);
    }
    if (word2vecOption(arg)) {
      printError(word2vecAnswer(std::vector<std::string>(argv + i, argv + argc), ""));
      return static_cast<int>(ExitCode::Usage);
    }
    if (!arg.empty() && arg[0] == '-') break;
    if (std::find(names.begin(), names.end(), arg) == names.end()) {
      // fastText's command words: its training as posvec's train, the others' counterparts.
      if (arg == "skipgram" || arg == "cbow") {
        printError("'" + arg + "' is fastText's command; " +
                   fastTextAnswer(arg, std::vector<std::string>(argv + i + 1, argv + argc), "")
                       .substr(std::string("these are fastText's options; ").size()));
        return static_cast<int>(ExitCode::Usage);
      }
      if (std::string answer = fastTextCommand(arg); !answer.empty()) {
        printError(answer);
        return static_cast<int>(ExitCode::Usage);
      }
      return unknown(arg);
    }
    // Under mpirun only train runs across processes. Another command started in the
    // same job (mpirun -np 1 posvec train ... : -np 1 posvec vector ...) never joined
    // it, and the train ranks waited for it forever: it joins now, and every rank
    // stops on the first options that differ ("command=vector" against train's).
    if (arg != "train" && arg != "help" && Cluster::launched() && Cluster::available()) {
      try {
        Cluster cluster;
        if (cluster.size() > 1) cluster.requireSameOptions("command=" + arg + "\n");
      } catch (const std::exception& e) {
        printError(shown(spelledMessage(e)));
        return static_cast<int>(exitCodeOf(e));
      }
    }
    // Options CLI11 would misread ("-train" as "-t rain") or call unexpected: the
    // nearest posvec option, or the posvec spelling of word2vec.c's and gensim's.
    const CLI::App* sub = app.get_subcommand(arg);
    const std::string hint = optionHint(sub, std::vector<std::string>(argv + i + 1, argv + argc));
    if (!hint.empty()) {
      printError(hint);
      return static_cast<int>(ExitCode::Usage);
    }
    break;
  }
  try {
    app.parse(argc, argv);
    if (help->parsed()) {
      if (topic.empty()) {
        // app.help() would show the help of the selected subcommand: "help" itself.
        std::cout << app.get_formatter()->make_help(&app, app.get_name(),
                                                    CLI::AppFormatMode::Normal);
      } else {
        const CLI::App* sub = nullptr;
        for (const CLI::App* s : app.get_subcommands({}))
          if (s->get_name() == topic && s != help) sub = s;
        if (!sub) return unknown(topic);
        std::cout << sub->help(app.get_name());
      }
      return 0;
    }
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const CLI::App* sub = nullptr;
    for (const CLI::App* s : app.get_subcommands()) sub = s;
    printError(parseErrorText(e, sub));
    return static_cast<int>(ExitCode::Usage);
  } catch (const std::bad_alloc&) {
    // The remedy depends on what the command was holding.
    const auto parsed = app.get_subcommands();
    const std::string cmd = parsed.empty() ? "" : parsed.front()->get_name();
    printError("out of memory" + outOfMemoryRemedy(cmd));
    return static_cast<int>(ExitCode::Failure);
  } catch (const std::exception& e) {
    printError(shown(spelledMessage(e)));
    return static_cast<int>(exitCodeOf(e));
  }
  return 0;
}

}  // namespace posvec::cli
