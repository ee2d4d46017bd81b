"""Loading a word2vec binary in fresh processes: posvec against gensim.

Each run is a new Python process that imports the package, then times one
``KeyedVectors.load_word2vec_format(path, binary=True)`` (the import is not
counted). Runs alternate posvec, gensim, posvec, ... so that whatever else the
machine does hits both alike. Printed per loader: min, median and max seconds
of the load call (wall clock), of its CPU time (user + system: what
preemption by other programs does not inflate) and the median page faults of the whole process (minor faults,
from getrusage), with the load average before and after. The file (random
vectors, 100k x 512 by default) is written once and stays in the page cache.
``--gap S`` waits S seconds before each run: with 0 a run reuses memory the
previous process has just freed; in a VM with free page reporting (virtio
balloon) memory free for about 2 s is handed back to the host and costs a host
fault again when touched, which is what a load started on its own meets.
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import sys, time
which, path = sys.argv[1], sys.argv[2]
if which == "posvec":
    import posvec as m
else:
    import gensim.models as m
t, c = time.perf_counter(), time.process_time()
kv = m.KeyedVectors.load_word2vec_format(path, binary=True)
print(time.perf_counter() - t, time.process_time() - c)
"""


def write_binary(path, words, dim):
    import numpy as np

    rng = np.random.default_rng(7)
    with open(path, "wb") as f:
        f.write(f"{words} {dim}\n".encode())
        for start in range(0, words, 4096):
            block = rng.standard_normal((min(4096, words - start), dim), dtype=np.float32)
            for i, row in enumerate(block):
                f.write(f"w{start + i} ".encode() + row.tobytes() + b"\n")


def one_run(which, path, env):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([sys.executable, "-c", CHILD, which, path], env=env, check=True,
                         capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall, cpu = map(float, out.strip().splitlines()[-1].split())
    return wall, cpu, after.ru_minflt - before.ru_minflt


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=15, help="fresh processes per loader")
    p.add_argument("--words", type=int, default=100000)
    p.add_argument("--dim", type=int, default=512)
    p.add_argument("--file", help="an existing word2vec binary to load instead")
    p.add_argument("--build", default="build", help="the CMake build folder")
    p.add_argument("--gap", type=float, default=0.0,
                   help="seconds to wait before each run (3: memory freed by the previous run "
                        "has been handed back to a VM's host, as for a load started on its own)")
    p.add_argument("--only", choices=["posvec", "gensim"], help="run one loader only")
    args = p.parse_args()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.abspath(os.path.join(args.build, "python")) + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    loaders = [args.only] if args.only else ["posvec", "gensim"]
    with tempfile.TemporaryDirectory() as tmp:
        path = args.file or os.path.join(tmp, "vectors.bin")
        if not args.file:
            write_binary(path, args.words, args.dim)
        with open(path, "rb") as f:  # into the page cache
            while f.read(1 << 24):
                pass
        load_before = os.getloadavg()
        times = {w: [] for w in loaders}
        faults = {w: [] for w in loaders}
        cpus = {w: [] for w in loaders}
        for _ in range(args.runs):
            for w in loaders:
                time.sleep(args.gap)
                t, cpu, flt = one_run(w, path, env)
                times[w].append(t)
                cpus[w].append(cpu)
                faults[w].append(flt)
        load_after = os.getloadavg()
        size = os.path.getsize(path) / 1e6
    print(f"load: word2vec binary ({size:.0f} MB), {args.runs} fresh processes per loader, "
          f"alternating, {args.gap:g} s before each run")
    print("load average before %.2f %.2f %.2f, after %.2f %.2f %.2f" % (load_before + load_after))
    print(f"  {'loader':8} {'min s':>7} {'median s':>9} {'max s':>7}   {'CPU s min/median/max':>21}  "
          f"{'minor faults (median)':>21}")
    for w in loaders:
        ts, cs = sorted(times[w]), sorted(cpus[w])
        print(f"  {w:8} {ts[0]:7.3f} {statistics.median(ts):9.3f} {ts[-1]:7.3f}   "
              f"{cs[0]:.3f}/{statistics.median(cs):.3f}/{cs[-1]:.3f}  {int(statistics.median(faults[w])):>21}")
    print("  wall seconds of each run, in order:")
    for w in loaders:
        print(f"    {w:8} " + " ".join(f"{t:.3f}" for t in times[w]))
    if len(loaders) == 2:
        a, b = statistics.median(times["posvec"]), statistics.median(times["gensim"])
        print(f"  median gensim / median posvec: {b / a:.1f}x")


if __name__ == "__main__":
    main()
