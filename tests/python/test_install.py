"""docs/python.md's install line works: a fresh venv in a temporary directory,
pip install --no-build-isolation from the source tree (offline), and posvec
imports from outside the source tree. A second install with an up-to-date build
directory recompiles nothing, and setup.py picks the build directory the docs say."""

import glob
import importlib.util
import os
import runpy
import subprocess
import sys
import sysconfig
import types

import pytest

from conftest import SOURCE_DIR

SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")


def need_pip_tools():
    for module in ("venv", "pip", "setuptools", "wheel"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"python3-{module} is not installed (tools/scripts/setup.sh --test installs it)")


def make_venv(tmp_path):
    env_dir = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(env_dir)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_INDEX_URL")}
    env["PIP_NO_INDEX"] = "1"  # offline: nothing may be downloaded
    return env_dir, str(env_dir / "bin" / "python"), env


def check_installed(python, env_dir, env, cwd):
    check = ("import os, posvec, numpy as np; print(os.path.dirname(posvec.__file__)); "
             "print(posvec.__version__); "
             "assert posvec.positional_encoding(3, 4).shape == (3, 4); "
             "assert os.path.exists(os.path.join(os.path.dirname(posvec.__file__), 'py.typed'))")
    out = subprocess.run([python, "-c", check], check=True, env=env, cwd=cwd,
                         capture_output=True, text=True).stdout.split()
    assert out[0].startswith(str(env_dir)), out
    assert out[1] == os.environ.get("POSVEC_VERSION", out[1])


def test_pip_install_into_a_fresh_venv(tmp_path):
    need_pip_tools()
    env_dir, python, env = make_venv(tmp_path)
    # The suite's build already compiled the module: pip's build reuses it unless
    # POSVEC_TEST_FULL_PIP_BUILD=1 asks for the from-scratch CMake build of pip's own.
    if os.environ.get("POSVEC_TEST_FULL_PIP_BUILD") == "1":
        env["POSVEC_BUILD_DIR"] = "none"
    elif os.environ.get("POSVEC_BUILD_DIR_FOR_PIP"):
        env["POSVEC_BUILD_DIR"] = os.environ["POSVEC_BUILD_DIR_FOR_PIP"]
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-build-isolation", SOURCE_DIR],
                   check=True, env=env, cwd=tmp_path)
    check_installed(python, env_dir, env, tmp_path)


def test_second_install_with_an_up_to_date_build_dir_compiles_nothing(tmp_path):
    need_pip_tools()
    build_dir = os.environ.get("POSVEC_BUILD_DIR_FOR_PIP")
    if not build_dir:
        pytest.skip("no configured build directory given (POSVEC_BUILD_DIR_FOR_PIP, set by CTest)")
    env_dir, python, env = make_venv(tmp_path)
    env["POSVEC_BUILD_DIR"] = build_dir

    def install():
        return subprocess.run([python, "-m", "pip", "install", "-v", "--no-build-isolation",
                               "--force-reinstall", "--no-deps", SOURCE_DIR],
                              check=True, env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True).stdout  # pip logs the build on stderr

    install()  # brings the build directory up to date, whatever its state
    objects = glob.glob(os.path.join(build_dir, "**", "*.o"), recursive=True)
    assert objects, f"no object files under {build_dir}"
    before = {path: os.stat(path).st_mtime_ns for path in objects}
    log = install()
    assert f"reusing the build in {os.path.abspath(build_dir)}" in log, log
    assert "Building CXX object" not in log, log  # neither Ninja nor make compiled anything
    assert {path: os.stat(path).st_mtime_ns for path in objects} == before
    check_installed(python, env_dir, env, tmp_path)


@pytest.fixture
def setup_py(monkeypatch):
    """setup.py's functions, without running setup() or importing setuptools (whose
    distutils shim objects to a second distutils in a process that already has one)."""
    fake = types.ModuleType("setuptools")
    fake.Extension, fake.setup = object, None
    command = types.ModuleType("setuptools.command.build_ext")
    command.build_ext = object
    for name, module in (("setuptools", fake), ("setuptools.command", types.ModuleType("c")),
                         ("setuptools.command.build_ext", command)):
        monkeypatch.setitem(sys.modules, name, module)
    return runpy.run_path(os.path.join(SOURCE_DIR, "setup.py"), run_name="posvec_setup")


def fake_build(directory, source, suffix=SUFFIX, target=True):
    directory.mkdir(parents=True)
    (directory / "CMakeCache.txt").write_text(
        "# This is the CMakeCache file.\n//Python module suffix\n"
        f"CMAKE_HOME_DIRECTORY:INTERNAL={source}\nPYTHON_MODULE_EXTENSION:INTERNAL={suffix}\n")
    (directory / "build.ninja").write_text(
        "build posvec_python: phony _posvec.so\n" if target else "build posvec_cli: phony posvec\n")


def test_build_dir_choice(setup_py, tmp_path):
    choose = setup_py["choose_build_dir"]
    source, own = tmp_path / "src", str(tmp_path / "own")
    source.mkdir()
    # No build/ in the clone: pip's own build, configured.
    build_dir, configure, why = choose(str(source), {}, SUFFIX, own)
    assert (build_dir, configure) == (own, True) and "holds no configured CMake build" in why
    # build/ without the Python target (no pybind11 when configured): not reused.
    fake_build(source / "build", source, target=False)
    assert choose(str(source), {}, SUFFIX, own)[:2] == (own, True)
    # build/ for another Python: not reused, and the reason names it.
    (source / "build" / "build.ninja").write_text("build posvec_python: phony x\n")
    (source / "build" / "CMakeCache.txt").write_text(
        f"CMAKE_HOME_DIRECTORY:INTERNAL={source}\nPYTHON_MODULE_EXTENSION:INTERNAL=.cpython-39-x.so\n")
    build_dir, configure, why = choose(str(source), {}, SUFFIX, own)
    assert (build_dir, configure) == (own, True) and "another Python" in why
    # build/ configured from another source tree (a copied directory): not reused.
    (source / "build" / "CMakeCache.txt").write_text(
        f"CMAKE_HOME_DIRECTORY:INTERNAL={tmp_path / 'elsewhere'}\nPYTHON_MODULE_EXTENSION:INTERNAL={SUFFIX}\n")
    assert "another source tree" in choose(str(source), {}, SUFFIX, own)[2]
    # A matching build/: reused as it is, not reconfigured.
    (source / "build" / "CMakeCache.txt").write_text(
        f"CMAKE_HOME_DIRECTORY:INTERNAL={source}\nPYTHON_MODULE_EXTENSION:INTERNAL={SUFFIX}\n")
    assert choose(str(source), {}, SUFFIX, own)[:2] == (str(source / "build"), False)
    # POSVEC_BUILD_DIR=none: pip's own build even so.
    assert choose(str(source), {"POSVEC_BUILD_DIR": "none"}, SUFFIX, own)[:2] == (own, True)
    # POSVEC_BUILD_DIR=DIR: a new directory is configured, a matching one reused ...
    new = str(tmp_path / "mine")
    assert choose(str(source), {"POSVEC_BUILD_DIR": new}, SUFFIX, own)[:2] == (new, True)
    fake_build(tmp_path / "mine", source)
    assert choose(str(source), {"POSVEC_BUILD_DIR": new}, SUFFIX, own)[:2] == (new, False)
    # ... and one for another Python is an error naming the setting, not a silent rebuild.
    with pytest.raises(RuntimeError, match="POSVEC_BUILD_DIR=.*another Python"):
        choose(str(source), {"POSVEC_BUILD_DIR": new}, ".cpython-39-x.so", own)
