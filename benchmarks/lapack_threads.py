"""One OpenBLAS thread against several for the CPU program's LAPACK steps (backend_cpu/lapack.py).

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/lapack_threads.py
        [--sizes 512,1024,2048,4096] [--threads 1,2] [--reps 5] [--busy]

Times float32 `cholesky` and `solve` (b of one column) on the program's path, the thread count
forced (`lapack_threads.count` replaced), the counts alternating call by call so that load
changes hit all alike; medians of `--reps`, with the running-task count of /proc/loadavg
(this process included) read before each call. `--busy` starts one spinning process beside
(`python -c "while 1: pass"`) for the run, the case where extra threads must not lose.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

import numpy as np

from tracejit.backend_cpu import lapack, lapack_threads


def _operands(n: int):
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n), dtype=np.float32)
    spd = (a @ a.T) / np.float32(n) + np.eye(n, dtype=np.float32)
    well = a + np.float32(2 * n**0.5) * np.eye(n, dtype=np.float32)
    return {"cholesky": (spd,), "solve": (well, rng.standard_normal((n, 1), dtype=np.float32))}


def _running() -> int:
    with open("/proc/loadavg", encoding="ascii") as f:
        return int(f.read().split()[3].split("/")[0])


def measure(sizes, counts, reps) -> None:
    for n in sizes:
        for op, args in _operands(n).items():
            fn = lapack.into(op, list(args))
            outs = [np.empty((n, n) if op == "cholesky" else (n, 1), np.float32)]
            times, running = {k: [] for k in counts}, []
            for _ in range(reps):
                for k in counts:
                    lapack_threads.count = lambda n, k=k: k
                    time.sleep(0.2)
                    running.append(_running())
                    t0 = time.perf_counter()
                    fn(*args, outs)
                    times[k].append(time.perf_counter() - t0)
            cells = ", ".join(
                f"{k} thr {statistics.median(t) * 1e3:.1f} ms" for k, t in times.items()
            )
            print(f"{op} {n}: {cells}; running tasks {min(running)}-{max(running)}", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="512,1024,2048,4096")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--busy", action="store_true")
    a = p.parse_args()
    spinner = None
    if a.busy:
        spinner = subprocess.Popen([sys.executable, "-c", "while 1: pass"])
    try:
        sizes = [int(s) for s in a.sizes.split(",")]
        measure(sizes, [int(k) for k in a.threads.split(",")], a.reps)
    finally:
        if spinner is not None:
            spinner.kill()
            spinner.wait()


if __name__ == "__main__":
    main()
