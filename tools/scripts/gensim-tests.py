#!/usr/bin/env python3
"""Runs gensim's own test files against posvec's KeyedVectors and Word2Vec.

    tools/scripts/gensim-tests.py [--impl posvec|gensim|both] [--data DIR] [-v] [FILE ...]

FILE is test_keyedvectors or test_word2vec (default: both). The test modules are
loaded at run time from the installed gensim (Debian's python3-gensim 4.2), never
copied: with --impl posvec, gensim.models.KeyedVectors / Word2Vec (and the same
names in gensim.models.keyedvectors / gensim.models.word2vec) are replaced by
posvec's classes before the module is loaded, so every test that names them runs
posvec's code; everything else (LineSentence, utils) stays gensim's.

Debian strips gensim's test_data directory. Unless --data names a copy of it, the
files the tests read are generated in a temporary directory: a topical corpus
standing in for lee_background.cor and head500.noblanks.cor (the words the tests
query, e.g. war/terrorism, attacks/bombings, israeli/palestinian, share topics),
10-d vectors trained on it by gensim standing in for euclidean_vectors.bin, the
small invalid-UTF-8 pair of files of the unicode_errors tests (built from what the
tests assert), questions-words.txt and wordsim353.tsv from the shared data when
present. Tests whose expected values belong to gensim's real files then fail
with gensim too; so the count that matters is "posvec passes / tests gensim passes
on the same data", restricted to the tests in scope (OUT_OF_SCOPE below says why
the others are left out). --impl both prints that comparison.

Each implementation runs in its own process (the replacement is global).
"""

from __future__ import annotations

import argparse
import bz2
import contextlib
import importlib.util
import io
import json
import logging
import os
import random
import subprocess
import sys
import tempfile
import time
import types
import unittest

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FILES = ("test_keyedvectors", "test_word2vec", "test_fasttext")

# Tests outside what posvec promises, with the reason (docs/gensim-compatibility.md).
PICKLE = "pickled gensim model"
OUT_OF_SCOPE = {
    "Gensim320Test.test": PICKLE,
    "TestWord2VecModel.test_load_old_model": PICKLE,
    "TestWord2VecModel.test_load_old_model_separates": PICKLE,
    "TestWord2VecModel.test_load_old_models_1_x": PICKLE,
    "TestWord2VecModel.test_load_old_models_2_x": PICKLE,
    "TestWord2VecModel.test_load_old_models_3_x": PICKLE,
    "TestWord2VecModel.test_large_mmap": "gensim's pickle with memory-mapped arrays (sep_limit, mmap)",
    "TestWord2VecModel.test_locking": "vectors_lockf (gensim-internal per-word learning-rate factors)",
    "TestWord2VecModel.test_method_in_bulk": "gensim's calibration loop, skipped by gensim itself",
    "LoadWord2VecFormatTest.test_load_word2vec_format_basic": "gensim-internal _load_word2vec_format(binary_chunk_size)",
    "LoadWord2VecFormatTest.test_load_word2vec_format_limit": "gensim-internal _load_word2vec_format(binary_chunk_size)",
    "LoadWord2VecFormatTest.test_load_word2vec_format_space_stripping": "gensim-internal _load_word2vec_format(binary_chunk_size)",
    "TestWord2VecScripts.test_word2vec_stand_alone_script": "gensim's command-line script",
}
for _name in ("test_line_sentence_works_with_filename", "test_cython_line_sentence_works_with_filename",
              "test_line_sentence_works_with_compressed_file", "test_line_sentence_works_with_normal_file",
              "test_path_line_sentences", "test_path_line_sentences_one_file"):
    OUT_OF_SCOPE["TestWord2VecSentenceIterators." + _name] = "LineSentence internals (gensim's reader)"

# test_fasttext.py: tests of gensim's own functions only (no class or function posvec
# replaces is called), and the Word2Vec tests it imports (counted in test_word2vec.py).
for _name in ("FTHashFunctionsTest.test_cython", "NgramsTest.test_text_cy",
              "NgramsTest.test_text_cy_wide_unicode", "NgramsTest.test_bytes_cy", "NgramsTest.test_fb",
              "UnpackTest.test_sanity", "UnpackTest.test_tricky", "UnpackTest.test_identity",
              "UnicodeVocabTest.test_ascii", "UnicodeVocabTest.test_bad_unicode"):
    OUT_OF_SCOPE["test_fasttext::" + _name] = "gensim's internal n-gram, hashing or .bin-reading functions"

# ---- substitute test data ------------------------------------------------------------

TOPICS = [
    "war terrorism conflict attacks bombings israeli palestinian israel military troops soldiers "
    "security violence peace forces fighting killed army border militants waging",
    "government administration minister president election party call leaders policy talks "
    "parliament officials vote council",
    "computer system graph trees user interface survey minors eps response time human machine "
    "software data network",
    "good nice great fine excellent better best pleasant happy well right sound safe secure just "
    "dear near honest effective full expert ripe",
    "worst bad terrible poor awful wrong evil cruel",
    "weather rain fire bushfires wind hot dry firefighters sydney blaze homes",
    "company market shares profit business bank economy money trade growth",
]
FUNCTION_WORDS = "the a of to and in on was were is said that for with by at from it as".split()


def lee_like_corpus(lines: int, seed: int) -> list:
    """Lines of lowercase words, each on one topic with function words mixed in."""
    rng = random.Random(seed)
    topics = [t.split() for t in TOPICS]
    out = []
    for _ in range(lines):
        words = topics[rng.randrange(len(topics))]
        n = rng.randrange(12, 30)
        line = [rng.choice(words) if rng.random() < 0.6 else rng.choice(FUNCTION_WORDS) for _ in range(n)]
        out.append(" ".join(line))
    return out


def make_data(directory: str) -> None:
    lee = lee_like_corpus(300, 1)
    with open(os.path.join(directory, "lee_background.cor"), "w") as f:
        f.write("\n".join(lee) + "\n")
    head = lee_like_corpus(500, 2)
    with open(os.path.join(directory, "head500.noblanks.cor"), "w") as f:
        f.write("\n".join(head) + "\n")
    with bz2.open(os.path.join(directory, "head500.noblanks.cor.bz2"), "wt") as f:
        f.write("\n".join(head) + "\n")
    with open(os.path.join(directory, "testcorpus.txt"), "w") as f:
        f.write("\n".join(lee[:9]) + "\n")
    # Two words whose last UTF-8 character lost its final byte, as in gensim's files.
    words = ["ありがとう".encode() + "う".encode()[:2], "どういたしまして".encode() + "て".encode()[:2]]
    with open(os.path.join(directory, "w2v_keyedvectors_load_test.modeldata"), "wb") as f:
        f.write(b"2 3\n" + words[0] + b" 0.6 0.6 0.6\n" + words[1] + b" 0.1 0.2 0.3\n")
    with open(os.path.join(directory, "w2v_keyedvectors_load_test.vocab"), "wb") as f:
        f.write(words[0] + b" 123\n" + words[1] + b" 789\n")
    shared = os.environ.get("POSVEC_SHARED_DATA") or os.path.join(SOURCE_DIR, "..", "shared", "data")
    if not os.path.isdir(shared):  # a worktree beside the main checkout
        shared = os.path.join(SOURCE_DIR, "..", "..", "shared", "data")
    for name in ("questions-words.txt", "wordsim353.tsv"):
        src = os.path.join(shared, name)
        if os.path.exists(src):
            with open(src, "rb") as fi, open(os.path.join(directory, name), "wb") as fo:
                fo.write(fi.read())
    # 10-d vectors trained by gensim on the corpus (the same file for both runs).
    from gensim.models import Word2Vec as GensimWord2Vec
    sentences = [line.split() for line in lee] * 3
    model = GensimWord2Vec(sentences, vector_size=10, min_count=1, seed=3, workers=1, epochs=20)
    model.wv.save_word2vec_format(os.path.join(directory, "euclidean_vectors.bin"), binary=True)


# ---- running one implementation ---------------------------------------------------------

def stub_testfixtures() -> None:
    """test_word2vec imports testfixtures.log_capture; a minimal one when it is absent."""
    try:
        import testfixtures  # noqa: F401
        return
    except ImportError:
        pass
    import functools

    def log_capture():
        def wrap(fn):
            @functools.wraps(fn)
            def run(self, *args, **kwargs):
                records = []

                class Keep(logging.Handler):
                    def emit(self, record):
                        records.append((record.name, record.levelname, record.getMessage()))

                handler, root = Keep(), logging.getLogger()
                old = root.level
                root.addHandler(handler)
                root.setLevel(logging.DEBUG)
                try:
                    return fn(self, records, *args, **kwargs)
                finally:
                    root.removeHandler(handler)
                    root.setLevel(old)
            return run
        return wrap

    sys.modules["testfixtures"] = types.SimpleNamespace(log_capture=log_capture)


def run_impl(impl: str, data: str, files: list, verbose: bool) -> dict:
    import gensim
    import gensim.models
    import gensim.models.keyedvectors
    import gensim.models.word2vec
    import gensim.test.utils as gutils

    gutils.datapath = lambda fname: os.path.join(data, fname)
    if impl == "posvec":
        import posvec
        for mod in (gensim.models, gensim.models.keyedvectors):
            mod.KeyedVectors = posvec.KeyedVectors
        for mod in (gensim.models, gensim.models.word2vec):
            mod.Word2Vec = posvec.Word2Vec
        if "test_fasttext" in files:
            import gensim.models.fasttext as gft
            gensim.models.FastText = gft.FastText = posvec.FastText
            gft.FastTextKeyedVectors = posvec.FastTextKeyedVectors
            for name in ("load_facebook_model", "load_facebook_vectors", "save_facebook_model"):
                setattr(gft, name, getattr(posvec, name))
    stub_testfixtures()
    logging.disable(logging.NOTSET)
    results = {}
    test_dir = os.path.dirname(gutils.__file__)
    for name in files:
        spec = importlib.util.spec_from_file_location(f"gensim_{name}_{impl}", os.path.join(test_dir, name + ".py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        suite = unittest.defaultTestLoader.loadTestsFromModule(module)

        def flatten(s):
            for t in s:
                if isinstance(t, unittest.TestSuite):
                    yield from flatten(t)
                else:
                    yield t

        for test in flatten(suite):
            key = f"{type(test).__name__}.{test._testMethodName}"
            result = unittest.TestResult()
            start = time.monotonic()
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                test.run(result)
            outcome, detail = "pass", ""
            if result.skipped:
                outcome, detail = "skip", result.skipped[0][1]
            elif result.errors or result.failures:
                outcome = "error" if result.errors else "fail"
                tb = (result.errors or result.failures)[0][1].strip().splitlines()
                detail = tb[-1][:300]
            results[f"{name}::{key}"] = {"outcome": outcome, "detail": detail,
                                         "seconds": round(time.monotonic() - start, 2)}
            if verbose:
                print(f"{impl} {name}::{key}: {outcome} {detail}", file=sys.stderr, flush=True)
    return results


def scope_of(key: str):
    if key.startswith("test_fasttext::TestWord2VecModel."):
        return "test_word2vec's tests, imported by test_fasttext (counted in test_word2vec.py)"
    return OUT_OF_SCOPE.get(key) or OUT_OF_SCOPE.get(key.split("::", 1)[1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", help="test_keyedvectors, test_word2vec and/or test_fasttext "
                                             "(default: all three)")
    ap.add_argument("--impl", choices=("posvec", "gensim", "both"), default="both")
    ap.add_argument("--data", help="a copy of gensim's test_data (default: generated substitutes)")
    ap.add_argument("--json", help="write every outcome to this file")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    files = args.files or list(FILES)
    if args.child:
        out = run_impl(args.child, args.data, files, args.verbose)
        print(json.dumps(out))
        return 0
    try:
        import gensim
    except ImportError:
        print("SKIP: gensim is not installed (apt-get install python3-gensim)")
        return 77
    if not gensim.__version__.startswith("4."):
        print(f"note: gensim {gensim.__version__}; these test files are meant for gensim 4.2", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="gensim-test-data-") as tmp:
        data = args.data
        if data is None:
            data = tmp
            make_data(data)
        impls = ("gensim", "posvec") if args.impl == "both" else (args.impl,)
        runs = {}
        for impl in impls:
            cmd = [sys.executable, os.path.abspath(__file__), "--child", impl, "--data", data, *files]
            if args.verbose:
                cmd.append("-v")
            # In the temporary folder: some tests write files to the working directory.
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in
                                                env.get("PYTHONPATH", "").split(os.pathsep) if p)
            p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, cwd=tmp, env=env)
            if p.returncode != 0:
                print(f"the {impl} run failed (exit {p.returncode})", file=sys.stderr)
                return 1
            runs[impl] = json.loads(p.stdout.strip().splitlines()[-1])
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gensim": gensim.__version__, "data": args.data or "generated", "runs": runs}, f, indent=1)
    print(f"gensim {gensim.__version__}, test data: {args.data or 'generated substitutes'}")
    for name in files:
        print(f"\n{name}.py")
        keys = sorted({k for r in runs.values() for k in r if k.startswith(name + "::")})
        in_scope = [k for k in keys if scope_of(k) is None]
        for impl in impls:
            r = runs[impl]
            passed = [k for k in in_scope if r[k]["outcome"] == "pass"]
            print(f"  {impl}: {len(passed)} of {len(in_scope)} in-scope tests pass "
                  f"({len(keys) - len(in_scope)} out of scope)")
        if len(impls) == 2:
            ref = [k for k in in_scope if runs["gensim"][k]["outcome"] == "pass"]
            ok = [k for k in ref if runs["posvec"][k]["outcome"] == "pass"]
            pct = 100.0 * len(ok) / len(ref) if ref else 0.0
            print(f"  posvec passes {len(ok)} of the {len(ref)} in-scope tests gensim passes on this data "
                  f"({pct:.0f}%)")
            for k in ref:
                if runs["posvec"][k]["outcome"] != "pass":
                    print(f"    FAIL {k.split('::', 1)[1]}: {runs['posvec'][k]['detail']}")
            nref = [k for k in in_scope if runs["gensim"][k]["outcome"] != "pass"]
            if nref:
                print(f"  not measurable here (gensim itself fails on this data): "
                      + ", ".join(k.split('::', 1)[1].split('.', 1)[1] for k in nref))
    return 0


if __name__ == "__main__":
    sys.exit(main())
