// posvec train: corpus files to word vectors (and optionally the full training
// state), or more epochs for a saved model with --resume.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "exit_code.hpp"
#include "interrupt.hpp"
#include "train_options.hpp"

namespace posvec::cli::training {
namespace {

// Interrupts and checkpoints: the trainer asks at each safe point. The state lives
// as long as training does.
struct Checkpointing {
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
  bool epochDue = false;
};

void addCheckpointing(TrainObserver& observer, Checkpointing& state, const Plan& plan, bool quiet,
                      const std::shared_ptr<cli::ProgressLine>& progressLine) {
  observer.interrupt = [&state, &plan] {
    cli::InterruptGuard::setImmediate(false);
    if (cli::InterruptGuard::requested()) return Interrupt::Stop;
    if (state.epochDue) return Interrupt::Checkpoint;
    if (plan.every.seconds > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - state.last).count() >=
            plan.every.seconds)
      return Interrupt::Checkpoint;
    return Interrupt::None;
  };
  observer.checkpoint = [&state, &plan, quiet, progressLine](const ModelState& model) {
    state.last = std::chrono::steady_clock::now();
    state.epochDue = false;
    try {
      saveModel(model, plan.checkpoint);
    } catch (const IoError& e) {
      // A full disk or a lost directory costs this checkpoint, not the run: the
      // previous checkpoint (if any) is still whole, and the final writes at the
      // end report the error if it lasts.
      progressLine->finish("");
      std::fprintf(stderr, "posvec: warning: checkpoint not written (%s); training goes on\n",
                   e.what());
      return;
    }
    if (!quiet) {
      std::string at = "after epoch " + std::to_string(model.epochsDone);
      if (model.partial.active()) at = "inside epoch " + std::to_string(model.epochsDone + 1);
      progressLine->finish("checkpoint " + at + " written to " + plan.checkpoint);
    }
  };
  auto report = observer.epochEnd;
  observer.epochEnd = [report, &state, &plan](const EpochReport& r) {
    // An epoch too short for a safe point inside: the state can be saved from here
    // on, before its line is shown.
    cli::InterruptGuard::setImmediate(false);
    if (report) report(r);
    if (plan.every.epochs > 0 && r.epoch % plan.every.epochs == 0) state.epochDue = true;
  };
}

// Trains a new model or continues --resume's; `scheduled` gets the schedule's total epochs.
ModelState trainOrResume(const Options& o, Plan& plan, Cluster* cluster,
                         const TrainObserver& observer, int& scheduled) {
  // Under mpirun rank 0 writes: when it writes word vectors alone, the last round
  // brings it the input rows only.
  SyncOptions sync = o.sync;
  if (!plan.fastText && plan.format != VectorFormat::Model && !writesState(o, plan))
    sync.final = SyncOptions::Final::WriterVectors;
  ModelState model;
  if (!o.resume.empty()) {
    model = loadModel(cli::seekableInput(o.resume, [](std::string_view head) {
      // Standard input may be endless: look at the magic before copying it.
      if (head.substr(0, 8) != std::string_view("POSVECM1", 8))
        throw FormatError("<stdin>: not a posvec model file (bad magic; expected 'POSVECM1')");
    }));
    // Only the thread count (and, with a warning, the learning rate) may change when
    // resuming; the rest is the model's.
    TrainConfig stored = TrainConfig::deserialize(model.config);
    if (plan.fastText && !stored.subwords) throw ConfigError(kFastTextNeedsSubwords);
    stored.threads = o.config.threads;
    // The weights' storage may change: the model is float32 in its file either way.
    if (o.weightsGiven) stored.weights = o.config.weights;
    if (o.alphaGiven && o.config.alpha != stored.alpha) {
      std::fprintf(stderr,
                   "posvec: warning: --alpha %g replaces the model's %g from here on: the "
                   "learning rate no longer follows the schedule of an uninterrupted run\n",
                   o.config.alpha, stored.alpha);
      stored.alpha = o.config.alpha;
    }
    // The trainer's record of how the corpus was read ("corpus." lines) stays.
    std::string reading;
    std::istringstream lines(model.config);
    for (std::string line; std::getline(lines, line);)
      if (line.rfind("corpus.", 0) == 0) reading += line + "\n";
    model.config = stored.serialize() + reading;
    if (o.updateVocab) {
      if (cluster)
        throw ConfigError("--update-vocab runs in one process (count the new text first)");
      const std::size_t before = model.words.size();
      const std::size_t added = extendVocabulary(model, plan.corpus);
      if (observer.log)
        observer.log("vocabulary: " + std::to_string(added) + " new words added to the model's " +
                     std::to_string(before));
    }
    // Without --epochs a stopped or checkpointed model finishes its schedule.
    const int left = epochsLeft(model);
    const int more = o.epochsGiven || left == 0 ? o.config.epochs : left;
    scheduled = model.epochsDone + more;
    if (cluster)
      resumeDistributed(*cluster, model, plan.corpus, more, sync, observer);
    else
      resumeTraining(model, plan.corpus, more, observer);
    return model;
  }
  TrainConfig config = o.config;
  config.memoryLimit = plan.memoryLimit;
  config.bf16Update = plan.bf16Update;
  // fastText's learning rate for subword models (0.05): at word2vec's 0.025 one
  // epoch of Brown reaches a tenth of fastText's analogy accuracy.
  if (config.subwords && !o.alphaGiven) config.alpha = kSubwordAlpha;
  // A new subword model's bucket rows no word uses are drawn as its writers write
  // them, never held (rowsDeferred).
  config.deferRows = rowsDeferred(o) && !cluster;
  scheduled = config.epochs;
  return cluster           ? trainDistributed(*cluster, plan.corpus, config, sync, observer)
         : plan.vocabulary ? train(plan.corpus, config, *plan.vocabulary, observer)
                           : train(plan.corpus, config, observer);
}

// Stopped by a signal: the full state, then how to go on.
[[noreturn]] void saveStopped(const Options& o, const ModelState& model, const Plan& plan,
                              int scheduled, cli::ProgressLine& progressLine) {
  progressLine.finish("");
  saveModel(model, plan.checkpoint);
  std::string at = "after epoch " + std::to_string(model.epochsDone);
  if (model.partial.active())
    at = "inside epoch " + std::to_string(model.epochsDone + 1) + " (" +
         std::to_string(model.partial.words) + " words into it)";
  std::fprintf(stderr,
               "posvec: training stopped %s of %d; the full state is in %s\n"
               "posvec: to continue: %s\n",
               at.c_str(), scheduled, plan.checkpoint.c_str(),
               resumeCommand(o, plan.checkpoint).c_str());
  throw ExitNow{cli::InterruptGuard::exitCode() != 0 ? cli::InterruptGuard::exitCode() : 130};
}

// `cluster`: under mpirun (runOnCluster). Rank 0 reports and writes; errors
// before training are every rank's (`together`), later ones a single rank's.
void run(const Options& o, Cluster* cluster = nullptr, bool* together = nullptr) {
  const auto start = std::chrono::steady_clock::now();
  const bool writer = !cluster || cluster->rank() == 0;
  Plan plan;
  if (!cluster) {
    plan = prepare(o, nullptr, writer);
  } else {
    plan = prepareTogether(o, *cluster, writer);
    *together = false;
  }

  if (o.dryRun) return printDryRun(o, plan);

  const bool quiet = cli::globals().quiet || !writer;
  auto progressLine = std::make_shared<cli::ProgressLine>();
  TrainObserver observer = reportingObserver(o, quiet, progressLine);
  // Under mpirun the launcher handles signals (it ends every rank): no checkpointing.
  std::optional<cli::InterruptGuard> guard;
  Checkpointing checkpointing;
  if (!cluster) {
    guard.emplace();
    addCheckpointing(observer, checkpointing, plan, quiet, progressLine);
  }
  cli::InterruptGuard::setImmediate(true);  // nothing to save while the corpus is counted
  if (!o.saveVocab.empty() && writer)
    observer.vocabulary = [&o](const Vocabulary& v, std::int64_t sentences) {
      saveWord2vecVocabulary(v, sentences, o.saveVocab);
    };

  int scheduled = 0;  // the schedule's total epochs
  ModelState model = trainOrResume(o, plan, cluster, observer, scheduled);
  cli::InterruptGuard::setImmediate(false);
  if (model.partial.active() || model.epochsDone < scheduled)
    saveStopped(o, model, plan, scheduled, *progressLine);

  if (!writer) return;  // every rank holds the combined model; rank 0 writes it
  writeResults(o, model, plan, cluster, quiet, start);
  // A signal after the last safe point: training was complete and is saved.
  if (cli::InterruptGuard::requested()) throw ExitNow{cli::InterruptGuard::exitCode()};
}

// Under mpirun. Errors every rank met together (different options, a missing
// file, an unwritable output) are reported once, by rank 0, and every rank ends
// normally; an error of one rank during training is printed by that rank with
// its number and ends the whole job (the others may wait in a collective).
void runOnCluster(const Options& o) {
  std::optional<Cluster> cluster;
  cluster.emplace();
  bool together = true;
  try {
    cluster->requireSameOptions(o.sameOnEveryRank);
    run(o, &*cluster, &together);
  } catch (const std::exception& e) {
    if (!together) {
      std::fprintf(stderr, "posvec: error: %s\n", cluster->tag(cli::spelledMessage(e)).c_str());
      std::fflush(stderr);
      cluster->abort(static_cast<int>(cli::exitCodeOf(e)));
    }
    // Rank 0 reports and sets the job's exit code; the others end quietly and
    // successfully, so mpirun does not cut rank 0 short for their exit status.
    if (cluster->rank() == 0) throw;
    cluster.reset();
    throw ExitNow{0, true};
  }
}

// Training settings the model's own values replace on --resume: all but these.
bool resumeMayChange(std::string_view key) {
  return key == "alpha" || key == "epochs" || key == "threads" || key == "weights";
}

posvec::cli::Registrar reg(20, [](CLI::App& app) {
  auto opts = std::make_shared<Options>();
  auto* sub = app.add_subcommand(
      "train", "Train word vectors (skip-gram or CBOW, negative sampling or hierarchical softmax)");
  sub->add_option("corpus", opts->corpus,
                  "Corpus files or directories: raw text, or whitespace-split lines with "
                  "--pretokenized; gzip, bzip2, xz and zstd are decompressed (\"-\" reads stdin)")
      ->required();
  sub->add_option("-o,--output", opts->output,
                  "Output file (.bin, .txt/.vec, .npy, .posvec = full-state model); '-' streams "
                  "to stdout (word2vec text unless --format says otherwise)")
      ->required();
  sub->add_option("--format", opts->format,
                  "Output format: bin, text, npy, model or fasttext (fastText's .bin, with "
                  "--subwords) (default: from the extension)")
      ->check(CLI::IsMember({"bin", "text", "txt", "vec", "npy", "model", "fasttext"}));
  sub->add_flag("--recursive", opts->recursive,
                "A directory in the corpus also contributes the files of its subdirectories");
  addSettings(sub, kTokenizerSettings, opts->tokenizer, {"chunkBytes", "tokenizerThreads"});
  // The training settings: their table (posvec/train_config.hpp) gives flags, help and defaults.
  addSettings(sub, kTrainSettings, opts->config);
  auto* resume = sub->add_option("--resume", opts->resume,
                                 "Continue a full-state model (.posvec) for --epochs more epochs, "
                                 "with the schedule it would have had");
  // A resumed model keeps its own settings, except those that may change.
  // A row that applies to subword or CBOW training only needs that flag.
  std::vector<std::pair<std::string, std::string>> needs;  // (flag, the flag it needs)
  forEachSetting(kTrainSettings, [&](const auto& row) {
    if (row.spelled.flag.empty() || row.customFlag) return;
    const std::string flag(row.spelled.flag);
    if (row.stored != Stored::Never && !resumeMayChange(row.key))
      resume->excludes(sub->get_option(flag));
    if (row.applies == trainsSubwords) needs.emplace_back(flag, "--subwords");
    if (row.applies == trainsCbow) needs.emplace_back(flag, "--cbow");
  });
  sub->add_flag("--update-vocab", opts->updateVocab,
                "With --resume: add the corpus words the model does not know (at least its "
                "min-count times) before training, as gensim's build_vocab(update=True)")
      ->needs(resume);
  sub->add_option("--save-model", opts->saveModel,
                  "Also save the full training state (for --resume) to this file ('-': stdout)");
  sub->add_option("--checkpoint-every", opts->checkpointEvery,
                  "Save the full state every DURATION (30s, 10m, 2h) or N epochs (2epochs), "
                  "atomically, to --save-model or OUT.posvec");
  sub->add_option("--save-vocab", opts->saveVocab,
                  "Write the vocabulary in word2vec.c's format (\"word count\" lines)");
  sub->add_flag("--also-vec", opts->alsoVec,
                "With fastText's .bin output, also write the word vectors to FILE.vec (word2vec "
                "text), as fastText does");
  sub->add_option("--phrases", opts->phrases,
                  "A phrase table (posvec phrases --save-table): its phrases are joined as the "
                  "corpus is read (new_york)");
  resume->excludes(
      sub->add_option("--read-vocab", opts->readVocab,
                      "Take the vocabulary from a word2vec.c vocabulary file instead of counting"));
  sub->add_flag("--json", opts->json, "Print a JSON summary (losses, sizes, time) on stdout");
  sub->add_flag("--dry-run", opts->dryRun,
                "Count the corpus, print the memory training would need, and exit (nothing is "
                "trained or written)");
  std::string memoryHelp;  // the row's help; the option takes a size with units (8G)
  forEachSetting(kTrainSettings, [&](const auto& row) {
    if (row.setting.name == "memoryLimit") memoryHelp = row.help;
  });
  sub->add_option("--memory-limit", opts->memoryLimit, memoryHelp);
  addSettings(sub, kSyncSettings, opts->sync);
  sub->add_option("--npy-dtype", opts->npyDtype,
                  "With --format npy: the array's type, float32 or float16 (half the size)")
      ->check(CLI::IsMember({"float32", "float16"}))
      ->capture_default_str();
  sub->callback([opts, sub, needs] {
    // Checked here, after --resume's exclusions: a resumed model keeps its n-gram
    // settings, and CLI11 would name the needed flag first.
    for (const auto& [name, needed] : needs)
      if (sub->get_option(name)->count() > 0 && sub->get_option(needed)->count() == 0 &&
          !(needed == "--subwords" ? opts->config.subwords
                                   : opts->config.architecture == Architecture::Cbow))
        throw CLI::RequiresError(name, needed);
    opts->epochsGiven = sub->get_option("--epochs")->count() > 0;
    opts->alphaGiven = sub->get_option("--alpha")->count() > 0;
    opts->weightsGiven = sub->get_option("--weights")->count() > 0;
    // The dense schedule's own defaults, for what is not given: the sum, the 4096 most
    // frequent rows every 100,000 words (the schedule as it was measured).
    if (opts->sync.schedule == SyncOptions::Schedule::Dense) {
      if (sub->get_option("--sync-combine")->count() == 0)
        opts->sync.combine = SyncOptions::Combine::SumChanges;
      if (sub->get_option("--sync-rows")->count() == 0) opts->sync.syncRows = 4096;
      if (sub->get_option("--sync-words")->count() == 0) opts->sync.syncWords = 100'000;
    }
    if (Cluster::launched()) {
      // Every option but the thread count must be the same on every rank (threads
      // may differ between machines); another command in the job joins with its name.
      std::istringstream given(sub->config_to_str(true, false));
      opts->sameOnEveryRank = "command=train\n";
      for (std::string line; std::getline(given, line);)
        if (line.rfind("threads=", 0) != 0) opts->sameOnEveryRank += line + "\n";
      runOnCluster(*opts);
    } else {
      run(*opts);
    }
  });
});

}  // namespace
}  // namespace posvec::cli::training
