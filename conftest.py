"""Settings for every test run from the repository root: tests/ and the package's doctests."""

import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path


def _emulate_cuda() -> bool:
    """Whether `import cupy` finds tests/cuda_emulator's stand-in (README there).

    TRACEJIT_CUDA_EMULATOR=1 or 0 decides; unset, a machine without CuPy that has g++ (the
    emulator compiles kernels with it) runs the CUDA backend's tests on the emulator.
    """
    flag = os.environ.get("TRACEJIT_CUDA_EMULATOR")
    if flag is not None:
        return flag == "1"
    return importlib.util.find_spec("cupy") is None and shutil.which("g++") is not None


# The emulator runs the generated CUDA kernels on the CPU; it goes first on sys.path before
# tracejit looks for CuPy.
if _emulate_cuda():
    sys.path.insert(0, str(Path(__file__).resolve().parent / "tests" / "cuda_emulator"))

import tracejit as tj

# Compile into a cache of this test session, never the user's: a stale entry cannot hide a bug,
# and examples that clear or invalidate the cache touch only this one.
if "TRACEJIT_CACHE_DIR" not in os.environ:
    tj.config.cache_dir = tempfile.mkdtemp(prefix="tracejit-test-cache-")
tj.config.verify_graphs = True
