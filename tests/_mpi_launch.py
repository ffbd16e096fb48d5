"""Launch tests/_distributed_worker.py under `mpiexec -n 2` (a subprocess, never a fork);
skip where mpi4py or mpiexec is missing (`pip install -e ".[distributed]"` installs both).

`launch` uses the `mpiexec` beside this Python (else the one on PATH) and the MPI library mpi4py picks by itself (the `mpich`
wheel in CI). `open_mpi()` finds an Open MPI installed beside it (`ompi_info`: Debian's
openmpi-bin, or a cluster's module), which `launch(..., mpi=open_mpi())` runs instead: its
`mpiexec`, and mpi4py pointed at its libmpi (MPI4PY_LIBMPI), so both ABIs get tested where
both are installed."""

from __future__ import annotations

import importlib.util
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
    # the one beside this Python first (the mpich wheel's, matching mpi4py's library), as a
    # system MPI on PATH (Debian's Open MPI) may be another ABI
    found = shutil.which("mpiexec", path=str(Path(sys.executable).parent)) or shutil.which(
        "mpiexec"
    )
    if found is None:
        pytest.skip("no mpiexec on PATH (the mpich wheel installs one)")
    return found


def open_mpi() -> tuple[str, str] | None:
    """(mpiexec, libmpi) of an installed Open MPI that mpi4py can switch to, or None."""
    info = shutil.which("ompi_info")
    spec = importlib.util.find_spec("mpi4py")
    if info is None or spec is None:
        return None
    # an mpi4py wheel carries an extension per MPI ABI (MPI.mpich..., MPI.openmpi...)
    if not any(Path(p).glob("MPI.openmpi*") for p in spec.submodule_search_locations or ()):
        return None
    paths = {}
    for which in ("bindir", "libdir"):
        text = subprocess.run(
            [info, "--path", which, "--parsable"], capture_output=True, text=True, check=False
        ).stdout
        paths[which] = Path(text.strip().rpartition(":")[2])
    for name in ("mpiexec.openmpi", "mpiexec"):  # Debian: mpiexec may be another MPI's
        mpiexec, libmpi = paths["bindir"] / name, paths["libdir"] / "libmpi.so"
        if mpiexec.exists() and libmpi.exists():
            return str(mpiexec), str(libmpi)
    return None


def launch(args, timeout=120, mpi: tuple[str, str] | None = None, **env):
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    # Open MPI's mpiexec refuses root (the GPU machines run tests as root); MPICH ignores these
    environment.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    mpiexec = _mpiexec()
    if mpi is not None:
        mpiexec, environment["MPI4PY_LIBMPI"] = mpi
    command = [mpiexec, "-n", "2", sys.executable, *map(str, args)]
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=environment,
        cwd=ROOT,
        check=False,
    )
