"""Settings for every test run from the repository root: tests/ and the package's doctests."""

import os
import sys
import tempfile
from pathlib import Path

# TRACEJIT_CUDA_EMULATOR=1: `import cupy` finds tests/cuda_emulator's stand-in, which runs the
# generated CUDA kernels on the CPU (tests/cuda_emulator/README.md). Before tracejit looks.
if os.environ.get("TRACEJIT_CUDA_EMULATOR") == "1":
    sys.path.insert(0, str(Path(__file__).resolve().parent / "tests" / "cuda_emulator"))

import tracejit as tj

# Compile into a cache of this test session, never the user's: a stale entry cannot hide a bug,
# and examples that clear or invalidate the cache touch only this one.
if "TRACEJIT_CACHE_DIR" not in os.environ:
    tj.config.cache_dir = tempfile.mkdtemp(prefix="tracejit-test-cache-")
tj.config.verify_graphs = True
