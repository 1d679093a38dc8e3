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


def check_offline_build_tools():
    """The build runs offline (pip install --no-build-isolation): the interpreter pip runs in must
    already have `wheel` (setuptools before 70.1 has no bdist_wheel of its own) and PyYAML. Debian's
    packages (tools/setup) give them to Debian's /usr/bin/python3 only; a pyenv or conda python3
    first on PATH has its own site-packages. Say so and what to do, instead of setuptools'
    "invalid command 'bdist_wheel'"."""
    import importlib.util

    missing = [name for name, module in (("wheel", "wheel"), ("PyYAML", "yaml"))
               if importlib.util.find_spec(module) is None]
    if "wheel" in missing:
        try:
            from setuptools.command import bdist_wheel  # noqa: F401  (setuptools >= 70.1)
            missing.remove("wheel")
        except ImportError:
            pass
    if not missing:
        return
    debian = "/usr/bin/python3"
    sys.exit(
        f"bubblesim: this Python ({sys.executable}) has no {' or '.join(missing)}, which the "
        f"offline build (pip install --no-build-isolation) needs. The Debian packages that "
        f"tools/setup installs serve {debian} only, and a pyenv or conda python3 has its own "
        f"packages. Either create the venv from Debian's Python, as `tools/setup --python-venv "
        f".venv` does:\n  {debian} -m venv --system-site-packages .venv && "
        f".venv/bin/pip install --no-build-isolation .\nor install them into this Python first "
        f"(needs the package index): {sys.executable} -m pip install wheel pyyaml")


check_offline_build_tools()


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
