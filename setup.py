"""Builds posvec._posvec with the project's CMake (pyproject.toml holds the metadata).

Which CMake build directory `pip install --no-build-isolation .` uses (docs/python.md):
- POSVEC_BUILD_DIR=DIR: that directory (the same variable tools/dev.sh builds in); it is
  configured first when it holds no build yet. POSVEC_BUILD_DIR=none: the fallback below.
- otherwise `build/` of this clone when it holds a configured build with the posvec_python
  target for this Python (tools/dev.sh build, or the cmake lines in the README): only
  that target is built there, incrementally, so an up-to-date build takes seconds;
- otherwise a build of its own under build/python-pip/ (a full compile the first time).
"""

import os
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
PIP_BUILD = os.path.join("build", "python-pip")


def read_cache(build_dir):
    """The CMakeCache.txt entries of build_dir as {name: value}; {} when there is none."""
    entries = {}
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt"), encoding="utf-8", errors="replace") as f:
            for line in f:
                if line[:1] in ("#", "/", "\n") or "=" not in line:
                    continue
                key, value = line.rstrip("\n").split("=", 1)
                entries[key.split(":", 1)[0]] = value
    except OSError:
        pass
    return entries


def has_python_target(build_dir):
    """True when the generated build files of build_dir define the posvec_python target."""
    for name, marker in (("build.ninja", "build posvec_python:"), ("Makefile", "posvec_python:")):
        try:
            with open(os.path.join(build_dir, name), encoding="utf-8", errors="replace") as f:
                if any(line.startswith(marker) for line in f):
                    return True
        except OSError:
            continue
    return False


def reusable(build_dir, source_dir, ext_suffix):
    """Why build_dir cannot be reused for this source and Python, or None when it can."""
    cache = read_cache(build_dir)
    if not cache:
        return "it holds no configured CMake build"
    home = cache.get("CMAKE_HOME_DIRECTORY", "")
    if not home or os.path.realpath(home) != os.path.realpath(source_dir):
        return f"it was configured for another source tree ({home or 'unknown'})"
    suffix = cache.get("PYTHON_MODULE_EXTENSION")
    if not suffix or not has_python_target(build_dir):
        return "it has no posvec_python target (pybind11 or the Python headers were missing)"
    if suffix != ext_suffix:
        return f"it was configured for another Python (modules named *{suffix}, this one needs *{ext_suffix})"
    return None


def choose_build_dir(source_dir, env, ext_suffix, own_dir):
    """(build directory, configure it?, one line saying why) for a pip build."""
    explicit = env.get("POSVEC_BUILD_DIR") or env.get("POSVEC_CMAKE_BUILD_DIR")
    if explicit and explicit != "none":
        build_dir = os.path.abspath(explicit)
        if not read_cache(build_dir):
            return build_dir, True, f"configuring a new build in {build_dir} (POSVEC_BUILD_DIR)"
        why_not = reusable(build_dir, source_dir, ext_suffix)
        if why_not:
            raise RuntimeError(f"POSVEC_BUILD_DIR={explicit} cannot build the Python module: {why_not}; "
                               "name another directory, or POSVEC_BUILD_DIR=none for pip's own build")
        return build_dir, False, f"reusing the build in {build_dir} (POSVEC_BUILD_DIR)"
    default = os.path.join(source_dir, "build")
    why_not = None if explicit == "none" else reusable(default, source_dir, ext_suffix)
    if explicit != "none" and why_not is None:
        return default, False, (f"reusing the build in {default} (only the posvec_python target; "
                                "POSVEC_BUILD_DIR=none builds apart)")
    reason = "POSVEC_BUILD_DIR=none" if explicit == "none" else f"not {default}: {why_not}"
    fresh = not read_cache(own_dir)
    return own_dir, True, (f"{'a full compile' if fresh else 'an incremental build'} in {own_dir} "
                           f"({reason})")


def say(line):
    """One line for the person running pip: pip shows a build's output only with -v, so
    the line also goes to the terminal when there is one."""
    sys.stdout.flush()
    print(line, file=sys.stderr, flush=True)
    if not sys.stderr.isatty():
        try:
            with open("/dev/tty", "w") as tty:
                tty.write("\n" + line + "\n")
        except OSError:
            pass


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        own_dir = os.path.abspath(os.path.join(self.build_temp, "cmake"))
        build_dir, configure, why = choose_build_dir(
            HERE, os.environ, sysconfig.get_config_var("EXT_SUFFIX"), own_dir)
        say(f"posvec: building the C++ module posvec._posvec: {why}. "
            "`pip install -v` shows the compile's progress.")
        env = dict(os.environ)
        env.setdefault("NINJA_STATUS", "[%p %f/%t] ")  # percent and step on each Ninja line
        if configure:
            command = [
                "cmake", "-S", HERE, "-B", build_dir,
                "-DCMAKE_BUILD_TYPE=Release",
                f"-DPython_EXECUTABLE={sys.executable}",
                "-DPOSVEC_BUILD_TESTS=OFF", "-DPOSVEC_BUILD_TOOLS=OFF", "-DPOSVEC_BUILD_BENCH=OFF",
            ]
            if not read_cache(build_dir) and shutil.which("ninja"):
                command.append("-GNinja")
            if shutil.which("ccache"):
                command.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
            subprocess.run(command, check=True, env=env)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", "2")
        subprocess.run(["cmake", "--build", build_dir, "--target", "posvec_python", "-j", jobs],
                       check=True, env=env)
        built = os.path.join(build_dir, "python", "posvec", os.path.basename(self.get_ext_filename(ext.name)))
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built, target)
        # The shipped corpus goes inside the package: posvec.study() trains on it by default.
        shutil.copyfile(os.path.join(HERE, "corpus", "posvec-corpus.txt"),
                        os.path.join(os.path.dirname(target), "posvec-corpus.txt"))
        say(f"posvec: built {os.path.relpath(built, HERE) if built.startswith(HERE) else built}")


if __name__ == "__main__":
    os.makedirs(PIP_BUILD, exist_ok=True)  # egg_info needs its directory to exist
    setup(
        ext_modules=[Extension("posvec._posvec", sources=[])],
        cmdclass={"build_ext": CMakeBuild},
        # Everything pip builds stays under build/ (ignored by git), not in the sources.
        options={"build": {"build_base": PIP_BUILD}, "egg_info": {"egg_base": PIP_BUILD}},
    )
