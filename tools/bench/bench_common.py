"""Pieces the benchmark drivers share: a command timed by /usr/bin/time -v, the host's
state (how far apart it has placed the two cores), and the word-pair files (WordSim-353,
SimLex-999) read as (word, word, score) triples."""
import os
import subprocess
import sys

# Round trips of one cache line between the two cores below this are the host's near
# placement of them (about 60 to 110 ns measured), above it its far one (340 to 380 ns),
# where rows written by both threads cost about twice as much (shared_rows,
# docs/benchmarks.md#the-hosts-two-states).
NEAR_NS = 200


def line_trip(exe):
    """The line round trip between the two cores now (ns), or None without shared_rows."""
    if not exe or not os.path.exists(exe):
        return None
    r = subprocess.run([exe, "trip"], capture_output=True, text=True)
    return float(r.stdout) if r.returncode == 0 and r.stdout.strip() else None


def labelled(exe, run):
    """run() with the line round trip measured before and after it: (its result, the
    round trip before, after, and the placement they give)."""
    before = line_trip(exe)
    result = run()
    after = line_trip(exe)
    return result, before, after, placement(before, after)


def placement(before, after):
    """'near' or 'far' when both round trips say so, 'mixed' when they differ, None unknown."""
    if before is None or after is None:
        return None
    near = (before < NEAR_NS, after < NEAR_NS)
    return "near" if all(near) else "far" if not any(near) else "mixed"


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
