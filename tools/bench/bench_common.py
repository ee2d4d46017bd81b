"""Pieces the benchmark drivers share: a command timed by /usr/bin/time -v, and the
word-pair files (WordSim-353, SimLex-999) read as (word, word, score) triples."""
import subprocess
import sys


def time_v(cmd, name):
    """Runs cmd under /usr/bin/time -v; exits naming `name` when it fails. Returns
    (wall seconds, peak RSS MiB, the completed process)."""
    r = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("%s: command failed: %s\n%s" % (name, " ".join(cmd), r.stderr[-2000:]))
    wall = rss = None
    for line in r.stderr.splitlines():
        line = line.strip()
        if line.startswith("Elapsed (wall clock) time"):
            parts = line.split(": ", 1)[1].split(":")
            wall = sum(float(p) * 60 ** i for i, p in enumerate(reversed(parts)))
        elif line.startswith("Maximum resident set size"):
            rss = int(line.split(": ")[1]) / 1024.0
    return wall, rss, r


def read_pairs(path):
    """(word, word, score) of each line of a tab-separated pair file, words lowercased;
    lines starting with '#' and blank lines are skipped."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            a, b, s = line.rstrip("\n").split("\t")[:3]
            out.append((a.lower(), b.lower(), float(s)))
    return out
