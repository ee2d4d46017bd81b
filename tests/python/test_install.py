"""docs/python.md's install line works: a fresh venv in a temporary directory,
pip install --no-build-isolation from the source tree (offline), and posvec
imports from outside the source tree."""

import importlib.util
import os
import subprocess
import sys

import pytest

from conftest import SOURCE_DIR


def test_pip_install_into_a_fresh_venv(tmp_path):
    for module in ("venv", "pip", "setuptools", "wheel"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"python3-{module} is not installed (tools/scripts/setup.sh --test installs it)")
    env_dir = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(env_dir)], check=True)
    python = str(env_dir / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_INDEX_URL")}
    env["PIP_NO_INDEX"] = "1"  # offline: nothing may be downloaded
    # The suite's build already compiled the module: pip's build reuses it unless
    # POSVEC_TEST_FULL_PIP_BUILD=1 asks for the from-scratch CMake build a user gets.
    if os.environ.get("POSVEC_TEST_FULL_PIP_BUILD") != "1" and os.environ.get("POSVEC_BUILD_DIR_FOR_PIP"):
        env["POSVEC_CMAKE_BUILD_DIR"] = os.environ["POSVEC_BUILD_DIR_FOR_PIP"]
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-build-isolation", SOURCE_DIR],
                   check=True, env=env, cwd=tmp_path)
    check = ("import os, posvec, numpy as np; print(os.path.dirname(posvec.__file__)); "
             "print(posvec.__version__); "
             "assert posvec.positional_encoding(3, 4).shape == (3, 4); "
             "assert os.path.exists(os.path.join(os.path.dirname(posvec.__file__), 'py.typed'))")
    out = subprocess.run([python, "-c", check], check=True, env=env, cwd=tmp_path,
                         capture_output=True, text=True).stdout.split()
    assert out[0].startswith(str(env_dir)), out
    assert out[1] == os.environ.get("POSVEC_VERSION", out[1])
