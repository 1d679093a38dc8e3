"""Builds bubblesim._core with the project's CMake (pyproject.toml holds the metadata).

`pip install --no-build-isolation .` configures build-pip (BUBBLESIM_PIP_BUILD_DIR overrides it)
with BUBBLESIM_BUILD_PYTHON=ON and without the tests and benchmarks, builds the target _core and
copies the module into the wheel. ccache is used when it is installed, as tools/test does.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = Path(os.environ.get("BUBBLESIM_PIP_BUILD_DIR", ROOT / "build-pip"))
        env = dict(os.environ)
        if shutil.which("ccache") and "CMAKE_CXX_COMPILER_LAUNCHER" not in env:
            env["CMAKE_CXX_COMPILER_LAUNCHER"] = "ccache"
            env.setdefault("CCACHE_BASEDIR", str(ROOT))
        configure = ["cmake", "-S", str(ROOT), "-B", str(build_dir),
                     "-DCMAKE_BUILD_TYPE=Release", "-DBUBBLESIM_BUILD_PYTHON=ON",
                     "-DBUBBLESIM_BUILD_TESTS=OFF", "-DBUBBLESIM_BUILD_BENCH=OFF",
                     f"-DPython_EXECUTABLE={sys.executable}"]
        if shutil.which("ninja") and not (build_dir / "CMakeCache.txt").exists():
            configure += ["-G", "Ninja"]
        subprocess.run(configure, check=True, env=env)
        jobs = os.environ.get("BUBBLESIM_BUILD_JOBS", str(os.cpu_count() or 1))
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "_core", "-j", jobs],
                       check=True, env=env)
        built = sorted((build_dir / "python" / "bubblesim").glob("_core*.so"))
        if not built:
            raise RuntimeError(f"the CMake build left no _core module in {build_dir}/python/bubblesim")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built[-1], target)


setup(ext_modules=[Extension("bubblesim._core", sources=[])], cmdclass={"build_ext": CMakeBuild})
