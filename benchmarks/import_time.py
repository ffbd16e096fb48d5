"""Import cost of tracejit, in fresh processes: `python benchmarks/import_time.py [--runs 5] [--root DIR]`.

Prints the median over the runs (wall and CPU seconds) of `import numpy`, `import tracejit`,
and `import tracejit` plus the first call of a tiny jitted function (warm disk cache: one
untimed call fills it first), each with the bytecode cache (as an installed package has it)
and without (`PYTHONDONTWRITEBYTECODE=1`, as this machine sets it: a checkout without `.pyc`).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_TIMED = """
import time
t, c = time.perf_counter(), time.process_time()
{body}
print(time.perf_counter() - t, time.process_time() - c)
"""
_FIRST_CALL = """import numpy as np, tracejit as tj
f = tj.jit(lambda x: np.tanh(x) * 2.0 + 1.0)
f(np.ones(8, np.float32))"""
CASES = {
    "import numpy": "import numpy",
    "import tracejit": "import tracejit",
    "import + first call": _FIRST_CALL,
}


def _run(code: str, env: dict[str, str]) -> tuple[float, float]:
    # run in the checkout: `python -c` puts the working directory first on sys.path
    out = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        env=env,
        cwd=env["PYTHONPATH"],
        capture_output=True,
        text=True,
    )
    if out.returncode:
        raise SystemExit(out.stderr)
    wall, cpu = out.stdout.split()[-2:]
    return float(wall), float(cpu)


def _environment(root: str, bytecode: bool, prefix: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": root}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if bytecode:
        env["PYTHONPYCACHEPREFIX"] = prefix
    else:  # tracejit's own modules compiled every time (NumPy's .pyc as installed)
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--root", default=str(ROOT), help="the checkout to measure")
    args = parser.parse_args()
    runs = args.runs
    print(f"load average {os.getloadavg()[0]:.1f}; median of {runs} fresh processes (s)")
    with tempfile.TemporaryDirectory() as prefix:
        for bytecode in (True, False):
            env = _environment(args.root, bytecode, prefix)
            _run(_TIMED.format(body=_FIRST_CALL), env)  # fills .pyc and the disk cache
            for name, body in CASES.items():
                times = [_run(_TIMED.format(body=body), env) for _ in range(runs)]
                wall = statistics.median(t[0] for t in times)
                cpu = statistics.median(t[1] for t in times)
                label = "with .pyc" if bytecode else "no .pyc"
                print(f"{label:10} {name:22} wall {wall:.3f}  cpu {cpu:.3f}")


if __name__ == "__main__":
    main()
