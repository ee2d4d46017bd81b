#!/usr/bin/python3
"""Subword (character n-gram) vectors: posvec train --subwords against fastText 0.9.2
(`fasttext skipgram`) and gensim's FastText, in one run on this machine. Three parts:

speed    Brown xN (N copies, lines shuffled after the first), 1 epoch, skip-gram,
         window 5, negative 5, sample 1e-4, min-count 5, minn 3, maxn 6, bucket 2M,
         2 threads: wall time and peak RSS of each whole process (/usr/bin/time -v:
         corpus read, vocabulary, training and the model file written), ratios
         posvec/peer. gensim runs under a time cap (--gensim-cap): a capped run is
         reported as "> cap" and its ratio as a lower bound.
quality  Brown, 5 epochs, seeds 1..3, dim 100: analogy (semantic and syntactic sections
         apart), WordSim-353 and SimLex-999 on the pairs in the vocabulary (gensim's own
         metrics, as eval_vectors.py), and on the pairs with a word NOT in the
         vocabulary at min-count 5, scored with the vectors each tool builds from
         n-grams (`posvec vector`, `fasttext print-word-vectors`). Word-only posvec is
         the reference (it cannot score those pairs).
load     A fastText skip-gram model with 1M buckets at dim 300, file in the page cache:
         wall time and peak RSS of posvec vector / posvec similarity, fastText's CLI
         (print-word-vectors) and gensim's load_facebook_vectors, best of --runs.

Until posvec's trainer has --subwords (detected from `posvec train --help`), the posvec
rows are skipped and the peers run alone. Run through bench-subwords.sh."""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PY = "/usr/bin/python3"
sys.path.insert(0, HERE)
from bench_train import count_words, shuffled_copies  # noqa: E402
from bench_common import labelled, read_pairs  # noqa: E402

SETTINGS = ["window 5", "negative 5", "sample 1e-4", "min-count 5", "minn 3", "maxn 6",
            "bucket 2000000"]


def timed(cmd, cap=None, stdin=None):
    """Runs cmd under /usr/bin/time -v (and `timeout cap` when cap is given); returns
    (wall seconds, peak RSS MiB, stdout, capped, CPU seconds user + system)."""
    full = ["/usr/bin/time", "-v"] + (["timeout", str(cap)] if cap else []) + cmd
    # The previous run's model (gigabytes at dim 300) written out first: its pages
    # still to be written would slow this run's own writes.
    os.sync()
    start = time.perf_counter()
    r = subprocess.run(full, capture_output=True, text=True, input=stdin)
    wall = time.perf_counter() - start  # /usr/bin/time's own figure has 10 ms steps
    capped = bool(cap) and r.returncode == 124
    if r.returncode != 0 and not capped:
        sys.exit("bench-subwords: command failed: %s\n%s" % (" ".join(cmd), r.stderr[-3000:]))
    rss = None
    cpu = 0.0
    for line in r.stderr.splitlines():
        line = line.strip()
        if line.startswith("User time (seconds)") or line.startswith("System time (seconds)"):
            cpu += float(line.split(": ")[1])
        elif line.startswith("Maximum resident set size"):
            rss = int(line.split(": ")[1]) / 1024.0
    return wall, rss, r.stdout, capped, cpu


class Posvec:
    """What the posvec binary can do: --subwords training, the fastText .bin writer."""

    def __init__(self, path, extra=()):
        self.path = path
        self.extra = list(extra)
        self.subwords = self.fasttext_format = False
        if not os.access(path, os.X_OK):
            return
        r = subprocess.run([path, "train", "--help"], capture_output=True, text=True)
        text = r.stdout + r.stderr
        self.subwords = "--subwords" in text
        self.fasttext_format = any("--format" in line and "fasttext" in line.lower()
                                   for line in text.splitlines())
        r = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                           capture_output=True, text=True)
        self.commit = r.stdout.strip()

    def train_cmd(self, corpus, out_stem, dim, epochs, threads, seed, alpha, subwords,
                  vectors_only=False):
        """The training command and its output: with subwords a model that gives any word a
        vector (fastText .bin when posvec writes it, else the .posvec model), or, with
        vectors_only and no .bin writer, the vocabulary's composed vectors (.vec)."""
        cmd = [self.path, "--quiet", "train", corpus, "--pretokenized", "--dim", str(dim),
               "--window", "5", "--negative", "5", "--sample", "1e-4", "--min-count", "5",
               "--alpha", str(alpha), "--epochs", str(epochs), "--threads", str(threads),
               "--seed", str(seed)]
        if not subwords:
            return cmd + ["-o", out_stem + ".vec"], out_stem + ".vec"
        cmd += ["--subwords", "--minn", "3", "--maxn", "6", "--bucket", "2000000"] + self.extra
        if self.fasttext_format:
            return cmd + ["--format", "fasttext", "-o", out_stem + ".bin"], out_stem + ".bin"
        if vectors_only:
            return cmd + ["-o", out_stem + ".vec"], out_stem + ".vec"
        return cmd + ["-o", out_stem + ".posvec"], out_stem + ".posvec"


def fasttext_cmd(corpus, out_stem, dim, epochs, threads, seed, alpha, bucket=2000000,
                 min_count=5):
    return ["fasttext", "skipgram", "-input", corpus, "-output", out_stem, "-dim", str(dim),
            "-ws", "5", "-neg", "5", "-t", "1e-4", "-minCount", str(min_count), "-lr",
            str(alpha), "-epoch", str(epochs), "-thread", str(threads), "-minn", "3", "-maxn",
            "6", "-bucket", str(bucket), "-seed", str(seed), "-verbose", "0"]


def gensim_cmd(corpus, out, dim, epochs, threads, seed, alpha, mode):
    return [PY, os.path.join(HERE, "gensim_fasttext_train.py"), corpus, out, str(dim),
            str(epochs), str(threads), str(seed), str(alpha), mode]


def remove(*paths):
    for p in paths:
        if os.path.exists(p):
            os.remove(p)


def brown_path():
    brown = os.path.join(HERE, "data", "brown.txt")
    if not os.path.exists(brown):
        subprocess.run(["bash", os.path.join(ROOT, "tools", "scripts", "fetch-brown.sh")],
                       check=True)
    return brown


def corpus_xn(brown, n):
    if n == 1:
        return brown
    dst = os.path.join(HERE, "data", "brown-x%d.txt" % n)
    shuffled_copies(brown, dst, n, n, True)  # x16 is bench-train's brown-x16.txt
    return dst


def header(args, posvec):
    load = os.getloadavg()
    print("bench-subwords: %s UTC, posvec %s (%s), fastText %s, gensim %s, %d threads" % (
        time.strftime("%Y-%m-%d %H:%M", time.gmtime()), posvec.commit if posvec.path else "-",
        "--subwords" if posvec.subwords else "no --subwords: peers only",
        fasttext_version(), gensim_version(), args.threads))
    print("machine: %s, %d CPUs; load average %.2f %.2f %.2f" % (
        platform.machine(), os.cpu_count(), *load), flush=True)


def fasttext_version():
    r = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "fasttext"],
                       capture_output=True, text=True)
    return r.stdout.strip() or "?"


def gensim_version():
    r = subprocess.run([PY, "-c", "import gensim; print(gensim.__version__)"],
                       capture_output=True, text=True)
    return r.stdout.strip() or "?"


def fmt_wall(r):
    return ("> %.0f s (cap)" % r["wall"]) if r["capped"] else "%.1f s" % r["wall"]


# ---------------------------------------------------------------------------- speed

def speed(args, posvec, results):
    brown = brown_path()
    brown_words = count_words(brown)
    work = tempfile.mkdtemp(prefix="posvec-bench-subwords-", dir=args.work)
    trainers = [t for t in args.trainers.split(",")
                if not t.startswith("posvec") or posvec.subwords]
    if any(t.startswith("posvec") for t in args.trainers.split(",")) and not posvec.subwords:
        print("speed: %s has no `train --subwords`: posvec not run" % posvec.path)
    print("speed: 1 epoch, skip-gram, %s, %d threads, lr %g; wall, CPU (user + system) and peak RSS of the whole "
          "process, model file written (posvec %s, fastText .bin + .vec, gensim "
          "save_facebook_model .bin); gensim corpus_file mode, capped at %d s" % (
              ", ".join(SETTINGS), args.threads, args.alpha,
              "fastText .bin" if posvec.fasttext_format else "model file", args.gensim_cap),
          flush=True)
    rows = results.setdefault("speed", [])
    for n in args.scale:
        corpus = corpus_xn(brown, n)
        words = brown_words * n
        for dim in args.dims:
            runs = {}  # trainer -> its runs, the trainers alternating
            for rep in range(args.repeat):
                for t in trainers:
                    if t == "gensim" and args.gensim_max_scale and n > args.gensim_max_scale:
                        if rep == 0:
                            print("  %-11s Brown x%-2d dim %3d  not run (--gensim-max-scale %d)" % (
                                t, n, dim, args.gensim_max_scale), flush=True)
                        continue
                    stem = os.path.join(work, "%s-x%d-%d" % (t, n, dim))
                    cap = None
                    if t.startswith("posvec"):
                        cmd, out = posvec.train_cmd(corpus, stem, dim, 1, args.threads, 1,
                                                    args.alpha, True)
                        if t == "posvec-bf16":
                            cmd[-2:-2] = ["--weights", "bf16"]
                        outs = [out]
                    elif t == "fasttext":
                        cmd = fasttext_cmd(corpus, stem, dim, 1, args.threads, 1, args.alpha)
                        outs = [stem + ".bin", stem + ".vec"]
                    else:
                        cmd = gensim_cmd(corpus, stem + ".bin", dim, 1, args.threads, 1,
                                         args.alpha, "file")
                        outs = [stem + ".bin"]
                        cap = args.gensim_cap
                    (wall, rss, _, capped, cpu), before, after, cores = labelled(
                        args.shared_rows, lambda: timed(cmd, cap))
                    size = sum(os.path.getsize(p) for p in outs if os.path.exists(p)) / 1e6
                    remove(*outs)
                    r = {"trainer": t, "scale": n, "dim": dim, "words": words, "wall": wall,
                         "rss": rss, "capped": capped, "file_mb": size, "cpu": cpu, "run": rep + 1,
                         "trip_before": before, "trip_after": after,
                         "cores": cores}
                    runs.setdefault(t, []).append(r)
                    rows.append(r)
                    print("  %-11s Brown x%-2d dim %3d  wall %-14s CPU %7.1f s  %9s words/s  "
                          "peak RSS %6.0f MiB  file %5.0f MB%s" % (
                              t, n, dim, fmt_wall(r), cpu,
                              "-" if capped else "%.0f" % (words / wall), rss, size,
                              "" if r["cores"] is None else
                              "  cores %s (line %.0f / %.0f ns before / after)" % (
                                  r["cores"], before, after)), flush=True)
            # Each trainer's median wall and CPU time (of the runs alternating with the
            # others'), and its largest peak.
            got = {}
            for t, rs in runs.items():
                got[t] = {"wall": statistics.median(r["wall"] for r in rs),
                          "cpu": statistics.median(r["cpu"] for r in rs),
                          "fastest": min(r["wall"] for r in rs),
                          "rss": max(r["rss"] for r in rs),
                          "capped": any(r["capped"] for r in rs)}
                if args.repeat > 1:
                    print("  %-11s Brown x%-2d dim %3d  median of %d: wall %.1f s, CPU %.1f s" % (
                        t, n, dim, len(rs), got[t]["wall"], got[t]["cpu"]), flush=True)
            for mine in ("posvec", "posvec-bf16"):
                if mine not in got:
                    continue
                for peer in ("fasttext", "gensim"):
                    if peer in got:
                        p, m = got[peer], got[mine]
                        print("  ratio %s/%s (Brown x%d, dim %d): speed (wall) %s%.1fx, CPU "
                              "time %s%.1fx, peak RSS %.2fx" % (
                                  mine, peer, n, dim, ">= " if p["capped"] else "",
                                  p["wall"] / m["wall"], ">= " if p["capped"] else "",
                                  p["cpu"] / m["cpu"], m["rss"] / p["rss"]), flush=True)
                        # The host's other tenants slow memory-bound runs most: the
                        # fastest runs show what each trainer does undisturbed.
                        if args.repeat > 1:
                            print("  ratio %s/%s (Brown x%d, dim %d), fastest runs: %s%.1fx "
                                  "(%.1f s against %.1f s)" % (
                                      mine, peer, n, dim, ">= " if p["capped"] else "",
                                      p["fastest"] / m["fastest"], m["fastest"], p["fastest"]),
                                  flush=True)
                        # posvec's runs by the host's placement of the cores (the peer's
                        # median over all its runs: fastText's time hardly moves with it).
                        for cores in ("near", "far"):
                            walls = [r["wall"] for r in runs[mine] if r["cores"] == cores]
                            if walls:
                                print("  ratio %s/%s (Brown x%d, dim %d), %s's runs with the "
                                      "cores %s: %s%.1fx (%s s against %.1f s)" % (
                                          mine, peer, n, dim, mine, cores,
                                          ">= " if p["capped"] else "",
                                          p["wall"] / statistics.median(walls),
                                          ", ".join("%.1f" % w for w in walls), p["wall"]),
                                      flush=True)
    shutil.rmtree(work, ignore_errors=True)


# -------------------------------------------------------------------------- quality

def vocabulary(corpus, min_count=5):
    counts = Counter()
    with open(corpus, encoding="utf-8") as f:
        for line in f:
            counts.update(line.split())
    return [w for w, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
            if c >= min_count]


def eval_words(data):
    words = set()
    for name in ("wordsim353.tsv", "simlex999.txt"):
        for a, b, _ in read_pairs(os.path.join(data, name)):
            words.update((a, b))
    with open(os.path.join(data, "questions-words.txt"), encoding="utf-8") as f:
        for line in f:
            if not line.startswith(":"):
                words.update(w.lower() for w in line.split())
    return words


def query_vectors(cmd, words, path):
    """Writes `word v1 .. vd` lines for words, as cmd (reading words on stdin) prints them."""
    r = subprocess.run(cmd, input="\n".join(words) + "\n", capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("bench-subwords: %s failed\n%s" % (" ".join(cmd), r.stderr[-2000:]))
    lines = [l.split() for l in r.stdout.splitlines() if l.strip()]
    if len(lines) != len(words):
        sys.exit("bench-subwords: %s printed %d vectors for %d words" % (cmd[0], len(lines),
                                                                       len(words)))
    with open(path, "w", encoding="utf-8") as out:
        out.write("%d %d\n" % (len(lines), len(lines[0]) - 1))
        for l in lines:
            out.write(" ".join(l) + "\n")


def quality(args, posvec, results):
    data = args.data
    if not os.path.exists(os.path.join(data, "questions-words.txt")):
        print("quality: no evaluation data in %s (pass --data DIR): not run" % data)
        return
    brown = brown_path()
    vocab = vocabulary(brown)
    in_vocab = set(vocab)
    extra = sorted(eval_words(data) - in_vocab)
    work = tempfile.mkdtemp(prefix="posvec-bench-subwords-q-", dir=args.work)
    trainers = []
    for t in args.quality_trainers.split(","):
        if t in ("posvec", "posvec-word") and not os.access(posvec.path, os.X_OK):
            print("quality: no %s: %s not run" % (posvec.path, t))
        elif t == "posvec" and not posvec.subwords:
            print("quality: %s has no `train --subwords`: posvec not run" % posvec.path)
        else:
            trainers.append(t)
            if t == "posvec" and not posvec.fasttext_format:
                print("quality: %s writes no fastText .bin: posvec's vectors of words outside "
                      "the vocabulary not scored" % posvec.path)
    print("quality: Brown, %d epochs, dim %d, seeds %s, lr %g, %s; vocabulary %d words at "
          "min-count 5" % (args.epochs, args.quality_dim, ",".join(map(str, args.seeds)),
                           args.alpha, ", ".join(SETTINGS), len(vocab)), flush=True)
    rows = results.setdefault("quality", [])
    for t in trainers:
        for seed in args.seeds:
            stem = os.path.join(work, "%s-%d" % (t, seed))
            vec, oov_vec = stem + "-vocab.vec", stem + "-oov.vec"
            if t == "fasttext":
                wall = timed(fasttext_cmd(brown, stem, args.quality_dim, args.epochs,
                                                   args.threads, seed, args.alpha))[0]
                model = stem + ".bin"
                query = ["fasttext", "print-word-vectors", model]
            else:
                cmd, model = posvec.train_cmd(brown, stem, args.quality_dim, args.epochs,
                                              args.threads, seed, args.alpha, t == "posvec",
                                              vectors_only=True)
                wall = timed(cmd)[0]
                query = [posvec.path, "--quiet", "vector", model]
            if model.endswith(".vec"):  # word-only, or no .bin writer: no unknown words
                vec, oov_vec = model, None
            else:
                query_vectors(query, vocab, vec)
                query_vectors(query, extra, oov_vec)
            ev = [PY, os.path.join(HERE, "eval_subwords.py"), vec, data]
            if oov_vec:
                ev.append(oov_vec)
            r = subprocess.run(ev, capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit("bench-subwords: evaluation failed\n%s" % r.stderr[-2000:])
            q = json.loads(r.stdout.strip().splitlines()[-1])
            q.update({"trainer": t, "seed": seed, "train_wall": wall})
            rows.append(q)
            print("  %-11s seed %d  train %5.1f s  %s" % (t, seed, wall, json.dumps(
                {k: round(v, 4) if isinstance(v, float) else v for k, v in q.items()
                 if k not in ("trainer", "seed", "train_wall")})), flush=True)
            remove(model, stem + ".vec", stem + ".bin", vec, oov_vec or "")
    shutil.rmtree(work, ignore_errors=True)
    quality_table(rows)


QUALITY_COLUMNS = [("analogy", "analogy"), ("analogy_semantic", "semantic"),
                   ("analogy_syntactic", "syntactic"), ("wordsim353", "WS-353"),
                   ("simlex999", "SimLex"), ("wordsim353_oov", "WS-353 OOV pairs"),
                   ("simlex999_oov", "SimLex OOV pairs"), ("wordsim353_all", "WS-353 all"),
                   ("simlex999_all", "SimLex all")]


def quality_table(rows):
    print("\n| trainer | " + " | ".join(c for _, c in QUALITY_COLUMNS) + " |")
    print("|---" * (len(QUALITY_COLUMNS) + 1) + "|")
    for t in dict.fromkeys(r["trainer"] for r in rows):
        mine = [r for r in rows if r["trainer"] == t]
        cells = []
        for k, _ in QUALITY_COLUMNS:
            vals = [r[k] for r in mine if r.get(k) is not None]
            if not vals:
                cells.append("—")
                continue
            sd = statistics.stdev(vals) if len(vals) > 1 else 0.0
            cells.append("%.3f ± %.3f" % (statistics.mean(vals), sd))
        print("| %s | %s |" % (t, " | ".join(cells)))
    if rows and "wordsim353_oov_pairs" in rows[0]:
        print("\n(OOV pairs: WordSim-353 %d of %d, SimLex-999 %d of %d have a word not in the "
              "vocabulary; mean ± sample s.d. over seeds)" % (
                  rows[0]["wordsim353_oov_pairs"], rows[0]["wordsim353_pairs"],
                  rows[0]["simlex999_oov_pairs"], rows[0]["simlex999_pairs"]), flush=True)


# ----------------------------------------------------------------------------- load

GENSIM_LOAD = r"""
import sys, time
t = time.perf_counter()
from gensim.models.fasttext import load_facebook_vectors
i = time.perf_counter()
wv = load_facebook_vectors(sys.argv[1])
l = time.perf_counter()
for w in sys.argv[2:]:
    print(w, " ".join("%.6g" % x for x in wv[w]))
print("import %.3f load %.3f" % (i - t, l - i), file=sys.stderr)
"""


def load(args, posvec, results):
    corpus = os.path.join(ROOT, "corpus", "posvec-corpus.txt")
    work = args.work or tempfile.gettempdir()
    big = os.path.join(work, "posvec-bench-big")
    if not os.path.exists(big + ".bin"):
        timed(["fasttext", "skipgram", "-input", corpus, "-output", big, "-dim", "300", "-bucket",
               "1000000", "-epoch", "1", "-minCount", "1", "-thread", str(args.threads),
               "-verbose", "0"])
        remove(big + ".vec")
    path = big + ".bin"
    with open(path, "rb") as f:  # into the page cache
        while f.read(1 << 24):
            pass
    w1, oov = args.load_words
    r = subprocess.run([PY, "-c", "import fasttext"], capture_output=True)
    print("load: fastText skip-gram .bin, 1,000,000 buckets, dim 300 (%.0f MB), words %s and "
          "%s (not in the vocabulary), file in the page cache, best of %d%s" % (
              os.path.getsize(path) / 1e6, w1, oov, args.runs,
              "" if r.returncode == 0 else "; fastText's Python module is not installed "
              "(Debian 12 does not package it): its CLI is the fastText peer"), flush=True)
    cases = [("fasttext print-word-vectors", ["fasttext", "print-word-vectors", path],
              "%s\n%s\n" % (w1, oov)),
             ("gensim load_facebook_vectors", [PY, "-c", GENSIM_LOAD, path, w1, oov], None)]
    if os.access(posvec.path, os.X_OK):
        cases = [("posvec vector", [posvec.path, "vector", path, w1, oov], None),
                 ("posvec similarity", [posvec.path, "similarity", path, w1, oov], None)] + cases
    rows = results.setdefault("load", [])
    best = {}
    for name, cmd, stdin in cases:
        runs = [timed(cmd, stdin=stdin) for _ in range(args.runs)]
        wall = min(r[0] for r in runs)
        rss = min(r[1] for r in runs)
        cpu = min(r[4] for r in runs)
        best[name] = (wall, rss)
        rows.append({"case": name, "wall": wall, "rss": rss, "cpu": cpu,
                     "runs": [r[0] for r in runs]})
        print("  %-30s best %6.3f s  CPU %6.2f s  peak RSS %7.0f MiB  (runs: %s)" % (
            name, wall, cpu, rss, " ".join("%.2f" % r[0] for r in runs)), flush=True)
    for mine in ("posvec vector", "posvec similarity"):
        if mine in best:
            for peer in ("fasttext print-word-vectors", "gensim load_facebook_vectors"):
                print("  ratio %s / %s: %.1fx faster, peak RSS %.3fx" % (
                    mine, peer, best[peer][0] / best[mine][0], best[mine][1] / best[peer][1]))
    if not args.keep_model:
        remove(path)


def shared_data():
    """../shared/data beside the checkout (or beside the folder of worktrees)."""
    for up in (("..",), ("..", "..")):
        d = os.path.join(ROOT, *up, "shared", "data")
        if os.path.isdir(d):
            return d
    return os.path.join(ROOT, "..", "shared", "data")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", default="speed,quality,load")
    ap.add_argument("--scale", default="4,16", help="Brown copies for the speed part")
    ap.add_argument("--dims", default="100,300", help="dimensions for the speed part")
    ap.add_argument("--trainers", default="posvec,fasttext,gensim",
                    help="speed part: posvec, posvec-bf16 (--weights bf16), fasttext, gensim")
    ap.add_argument("--repeat", type=int, default=1,
                    help="speed part: runs of each trainer, alternating; medians compared")
    ap.add_argument("--quality-trainers", default="posvec,fasttext,posvec-word")
    ap.add_argument("--posvec", default=os.path.join(ROOT, "build", "posvec"))
    ap.add_argument("--shared-rows", default=os.path.join(ROOT, "build", "shared_rows"),
                    help="the line round-trip probe that labels each run with the host's state")
    ap.add_argument("--data", default=os.environ.get("POSVEC_SHARED_DATA", shared_data()),
                    help="directory with questions-words.txt, wordsim353.tsv, simlex999.txt")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--posvec-args", default="",
                    help="more options for posvec train --subwords (e.g. '--combine 1')")
    ap.add_argument("--alpha", type=float, default=0.05,
                    help="learning rate of every trainer (fastText's skip-gram default)")
    ap.add_argument("--gensim-cap", type=int, default=1800,
                    help="seconds after which a gensim training run is stopped")
    ap.add_argument("--gensim-max-scale", type=int, default=0,
                    help="run gensim only on Brown xN with N at most this (0: all)")
    ap.add_argument("--epochs", type=int, default=5, help="quality part")
    ap.add_argument("--quality-dim", type=int, default=100)
    ap.add_argument("--seeds", default="1,2,3", help="quality part")
    ap.add_argument("--runs", type=int, default=3, help="load part: runs per command")
    ap.add_argument("--load-words", default="house,walkers",
                    help="load part: a vocabulary word and an unknown word")
    ap.add_argument("--keep-model", action="store_true", help="load part: keep the big model")
    ap.add_argument("--work", default=None, help="scratch folder (default: the system's)")
    ap.add_argument("--json", help="write every measurement to this file")
    args = ap.parse_args()
    args.scale = [int(x) for x in args.scale.split(",")]
    args.dims = [int(x) for x in args.dims.split(",")]
    args.seeds = [int(x) for x in args.seeds.split(",")]
    args.load_words = args.load_words.split(",")
    if len(args.load_words) != 2:
        ap.error("--load-words takes two words")
    args.data = os.path.abspath(args.data)
    posvec = Posvec(args.posvec, args.posvec_args.split())
    if not hasattr(posvec, "commit"):
        posvec.commit = "-"
    header(args, posvec)
    results = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               "commit": posvec.commit, "loadavg": os.getloadavg()}
    for part in args.parts.split(","):
        {"speed": speed, "quality": quality, "load": load}[part](args, posvec, results)
        if args.json:
            with open(args.json + ".tmp", "w") as f:
                json.dump(results, f, indent=1)
            os.replace(args.json + ".tmp", args.json)
    print("load average at the end: %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
