"""Shared fixtures: where the package, the CLI and the shared test data are."""

import os
import shutil
import subprocess

import numpy as np
import pytest

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(SOURCE_DIR, "corpus", "posvec-corpus.txt")


def shared_data(name):
    base = os.environ.get("POSVEC_SHARED_DATA") or os.path.join(SOURCE_DIR, "..", "shared", "data")
    path = os.path.join(base, name)
    if not os.path.exists(path):
        pytest.skip(f"shared test data '{name}' is absent (set POSVEC_SHARED_DATA)")
    return path


@pytest.fixture
def cli():
    """The posvec command line built beside the module, or skip."""
    path = os.environ.get("POSVEC_CLI")
    if not path or not os.path.exists(path):
        pytest.skip("the posvec command line is not built (POSVEC_CLI unset)")

    def run(*args):
        return subprocess.run([path, *map(str, args)], check=True, capture_output=True)

    return run


@pytest.fixture
def gensim_models():
    return pytest.importorskip("gensim.models", reason="gensim is not installed (python3-gensim)")


def random_vectors(words, dim, seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((len(words), dim)).astype(np.float32)
