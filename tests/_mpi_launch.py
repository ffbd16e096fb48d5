"""Launch tests/_distributed_worker.py under `mpiexec -n 2` (a subprocess, never a fork);
skip where mpi4py or mpiexec is missing (`pip install -e ".[distributed]"` installs both)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WORKER = ROOT / "tests" / "_distributed_worker.py"


def _mpiexec() -> str:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        pytest.skip('mpi4py is not installed (pip install -e ".[distributed]")')
    found = shutil.which("mpiexec") or shutil.which(
        "mpiexec", path=str(Path(sys.executable).parent)
    )
    if found is None:
        pytest.skip("no mpiexec on PATH (the mpich wheel installs one)")
    return found


def launch(args, timeout=120, **env):
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    # Open MPI's mpiexec refuses root (the GPU machines run tests as root); MPICH ignores these
    environment.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    command = [_mpiexec(), "-n", "2", sys.executable, *map(str, args)]
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=environment,
        cwd=ROOT,
        check=False,
    )
