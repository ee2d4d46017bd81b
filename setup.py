"""Builds posvec._posvec with the project's CMake (pyproject.toml holds the metadata)."""

import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
PIP_BUILD = os.path.join("build", "python-pip")
os.makedirs(PIP_BUILD, exist_ok=True)  # egg_info needs its directory to exist


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        # POSVEC_CMAKE_BUILD_DIR: an already configured build of this source tree (the
        # test suite passes its own, so installing does not compile the library twice).
        reuse = os.environ.get("POSVEC_CMAKE_BUILD_DIR")
        build_dir = os.path.abspath(reuse or os.path.join(self.build_temp, "cmake"))
        configure = [
            "cmake", "-S", HERE, "-B", build_dir,
            "-DCMAKE_BUILD_TYPE=Release",
            f"-DPython_EXECUTABLE={sys.executable}",
            "-DPOSVEC_BUILD_TESTS=OFF", "-DPOSVEC_BUILD_TOOLS=OFF", "-DPOSVEC_BUILD_BENCH=OFF",
        ]
        if shutil.which("ccache"):
            configure.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
        if not reuse:
            subprocess.run(configure, check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", "2")
        subprocess.run(["cmake", "--build", build_dir, "--target", "posvec_python", "-j", jobs],
                       check=True)
        built = os.path.join(build_dir, "python", "posvec", os.path.basename(self.get_ext_filename(ext.name)))
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built, target)
        # The shipped corpus goes inside the package: posvec.study() trains on it by default.
        shutil.copyfile(os.path.join(HERE, "corpus", "posvec-corpus.txt"),
                        os.path.join(os.path.dirname(target), "posvec-corpus.txt"))


setup(
    ext_modules=[Extension("posvec._posvec", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    # Everything pip builds stays under build/ (ignored by git), not in the sources.
    options={"build": {"build_base": PIP_BUILD}, "egg_info": {"egg_base": PIP_BUILD}},
)
