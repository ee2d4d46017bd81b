// Fuzzes the command line's option parsing: the top-level dispatch (word2vec.c's
// command lines with no command word, unknown commands, --help, --version) and
// `pe`, `encode`, `study`, `rope`, `vector` and `train` (word2vec.c's and fastText's
// spellings among them). Input: one byte choosing the command word (or none), then
// the arguments separated by NUL bytes. Every outcome is a success with nothing on
// stderr, or exactly one "posvec: error:" line and the exit code of a posvec error
// (2 usage, 3 I/O, 4 format, 5 input); exit code 1 means an exception that is not a
// posvec error got out of a command.
//
// Nothing outside the harness's scratch directory is read or written, and nothing
// is computed at length:
// - pe, encode, study and rope check their options in parse-only mode and return;
//   rope's config.json is one of the fixtures below.
// - vector runs for real, on a fixture: whatever path it is given is looked up in
//   the scratch directory ('/' turned into '_'), which holds a few small vector files.
// - Every other command (train, attend, tokenize, the other vector queries) has no
//   parse-only mode: once the whole command line is parsed and checked (CLI11, the
//   hints for word2vec.c's and gensim's spellings, unexpected arguments), a hook
//   that runs before any command's callback ends the run with ParsedOnly, which the
//   harness counts as a success. Nothing is trained, read or written.
// Standard input is /dev/null ('-' reads nothing).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "fuzz_util.hpp"
#include "posvec/model_state.hpp"

namespace {

using namespace posvec;

// Sends std::cout / std::cerr into a string while alive.
class Capture {
 public:
  explicit Capture(std::ostream& stream) : stream_(stream), old_(stream.rdbuf(text_.rdbuf())) {}
  ~Capture() { stream_.rdbuf(old_); }
  std::string text() const { return text_.str(); }

 private:
  std::ostream& stream_;
  std::ostringstream text_;
  std::streambuf* old_;
};

// A path typed on the command line, as a file of the scratch directory.
std::string inScratch(const std::string& typed) {
  if (typed.empty() || typed == "-") return typed;
  std::string name = typed;
  std::replace(name.begin(), name.end(), '/', '_');
  if (name == "." || name == "..") name = "_" + name;
  return fuzz::scratch().path(name);
}

// The files inScratch finds: word vectors in each format `vector` reads, and
// config.json files of several rope types (one not JSON at all).
void writeFixtures() {
  const fuzz::Scratch& s = fuzz::scratch();
  MatrixF m(3, 4);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = 0.25f * static_cast<float>(i) - 1.0f;
  const Embeddings e({"the", "cat", "sat"}, m, {30, 20, 10});
  saveVectors(e, s.path("v.txt"), VectorFormat::Word2VecText);
  saveVectors(e, s.path("v.bin"), VectorFormat::Word2VecBinary);
  saveVectors(e, s.path("v.npy"), VectorFormat::Npy);
  s.write("glove.txt", "the 1 0\ncat 0 1\n");
  s.write("latin1.txt", "2 2\ncaf\xe9 1 0\nthe 0 1\n");
  ModelState model;
  model.words = {"the", "cat", "sat"};
  model.counts = {30, 20, 10};
  model.input = m;
  model.output = m;
  model.config = "dim=4\n";
  model.epochsDone = 1;
  model.epochLosses = {2.5};
  saveModel(model, s.path("m.posvec"));
  s.write("config.json", R"({"hidden_size": 4096, "num_attention_heads": 32,
    "max_position_embeddings": 131072, "rope_theta": 500000.0,
    "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"}})");
  s.write("yarn.json", R"({"hidden_size": 3584, "num_attention_heads": 28,
    "max_position_embeddings": 32768, "rope_theta": 1000000.0,
    "rope_scaling": {"factor": 4.0, "original_max_position_embeddings": 32768, "type": "yarn"}})");
  s.write("longrope.json", R"({"head_dim": 8, "max_position_embeddings": 131072,
    "original_max_position_embeddings": 4096, "rope_scaling": {"type": "longrope",
    "short_factor": [1, 1.5, 2, 2.5], "long_factor": [1, 4, 8, 16]}})");
  s.write("neox.json", R"({"hidden_size": 6144, "num_attention_heads": 64, "rotary_pct": 0.25,
    "rotary_emb_base": 10000})");
  s.write("bad.json", "{not json");
}

// Commands that stop after checking their options (Globals::parseOnly), the one
// that runs on the fixtures, and help; any other command is stopped before it runs.
const std::set<std::string> kRuns = {"pe", "encode", "study", "rope", "vector", "help"};

// Thrown (not a std::exception, so runCommandLine lets it through) when the command
// line parsed completely and its command would run now.
struct ParsedOnly {};

// The paths of rope and vector point into the scratch directory. The root's
// parse-complete callback runs after every option is parsed and checked and before
// any subcommand's callback (CLI::App::run_callback); the subcommands' own
// callbacks are left in place (they own the options' storage).
void confine(CLI::App& app, CLI::App* sub) {
  const std::string& name = sub->get_name();
  if (name == "rope") sub->get_option("config")->transform(inScratch);
  if (name == "vector") sub->get_option("vectors")->transform(inScratch);
  app.parse_complete_callback([&app] {
    for (const CLI::App* parsed : app.get_subcommands())
      if (kRuns.count(parsed->get_name()) == 0) throw ParsedOnly{};
  });
}

// Each registration, followed by confine() on the commands it added.
void confineCommands() {
  for (cli::Command& c : cli::commands()) {
    c.add = [add = c.add](CLI::App& app) {
      const auto all = [](CLI::App*) { return true; };
      const std::size_t before = app.get_subcommands(all).size();
      add(app);
      const std::vector<CLI::App*> subs = app.get_subcommands(all);
      for (std::size_t i = before; i < subs.size(); ++i) confine(app, subs[i]);
    };
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const int devNull = ::open("/dev/null", O_RDONLY);
  if (devNull < 0 || ::dup2(devNull, STDIN_FILENO) < 0)
    fuzz::fail("cannot read stdin from /dev/null");
  ::close(devNull);
  writeFixtures();
  confineCommands();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  // The first three keep the meaning they had when these were the only commands
  // (the seeds in corpus/cli_options start with 0, 1 or 2). "": no command word.
  static const char* const kCommands[] = {"pe", "encode", "study", "rope", "vector", "train", ""};
  constexpr std::size_t kChoices = sizeof kCommands / sizeof kCommands[0];
  std::vector<std::string> args = {"posvec"};
  if (const char* command = kCommands[data[0] % kChoices]; *command) args.emplace_back(command);
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  for (std::size_t pos = 0; !rest.empty();) {
    const std::size_t end = rest.find('\0', pos);
    args.emplace_back(rest.substr(pos, end == std::string_view::npos ? end : end - pos));
    if (end == std::string_view::npos) break;
    pos = end + 1;
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  cli::globals() = {};
  cli::globals().parseOnly = true;
  int rc = 0;
  std::string err;
  {
    Capture out(std::cout), errors(std::cerr);
    try {
      rc = cli::runCommandLine(static_cast<int>(args.size()), argv.data());
    } catch (const ParsedOnly&) {
      rc = 0;  // parsed and checked; the command itself was not run
    }
    err = errors.text();
  }
  if (rc == 0) {
    fuzz::check(err.empty(), "success with a message on stderr: " + err);
    return 0;
  }
  fuzz::check(err.rfind("posvec: error: ", 0) == 0 && err.back() == '\n',
              "a failure without its 'posvec: error:' line: " + err);
  fuzz::check(std::count(err.begin(), err.end(), '\n') == 1,
              "a failure that is more than one line: " + err);
  fuzz::check(rc >= 2 && rc <= 5, "exit code " + std::to_string(rc) + " for: " + err);
  // A negative count read into an unsigned option must not be reported as
  // 2^64 - n, a number the user never typed.
  if (err.find("18446744073") != std::string::npos) {
    bool typed = false;
    for (const std::string& a : args) typed = typed || a.find("18446744073") != std::string::npos;
    fuzz::check(typed, "a message quotes a wrapped negative number: " + err);
  }
  return 0;
}
