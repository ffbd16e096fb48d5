"""Parallel kernels next to a busy process: default threads against one thread (issue 10).

    python benchmarks/contention.py [--rounds 4] [--reps 30] [--busy 1] [--only w1,mlp]

Starts `--busy` processes that spin (`while True: pass`), then alternates fresh tracejit
processes with `TRACEJIT_NUM_THREADS=1` and with the default thread count (the runtime's pool,
cpp/pool.h). Each process compiles the benchmark workloads (benchmarks/workloads.py, full
size), checks them against NumPy once, and times the median of `--reps` calls of each.
Prints every round and, per workload, the median over the rounds and the ratio default / one
thread (the target: <= 1 within noise). Rounds alternate so that a change of the machine's
load hits both settings alike. Nothing is pinned.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORKLOADS = ("w1", "softmax", "layernorm", "mlp")
SPIN = "while True: pass"


def _child(names: list[str], reps: int) -> dict:
    sys.path.insert(0, str(HERE))
    import workloads

    out = {}
    for name in names:
        data = workloads.make_data(name, "full")
        built = workloads.build_tracejit(name, data)
        want = workloads.reference(name, data)
        workloads.check(name, built.fetch(built.call()), want, data.get("params"))
        for _ in range(3):
            built.call()
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            built.call()
            times.append(time.perf_counter() - t0)
        out[name] = statistics.median(times)
    return out


def _run(threads: int | None, names: list[str], reps: int, cache: str) -> dict:
    env = dict(os.environ, TRACEJIT_CACHE_DIR=cache)
    for var in ("TRACEJIT_NUM_THREADS", "OMP_NUM_THREADS"):
        env.pop(var, None)
    if threads is not None:
        env["TRACEJIT_NUM_THREADS"] = str(threads)
    cmd = [sys.executable, __file__, "--child", ",".join(names), "--reps", str(reps)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--busy", type=int, default=1, help="spinning processes beside")
    ap.add_argument("--only", default=",".join(WORKLOADS))
    ap.add_argument("--child", default=None, help="internal")
    opts = ap.parse_args()
    names = opts.only.split(",")
    if opts.child:
        print(json.dumps(_child(opts.child.split(","), opts.reps)))
        return
    busy = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(opts.busy)]
    rows: dict[str, list[dict]] = {"1": [], "default": []}
    try:
        with tempfile.TemporaryDirectory(prefix="tj-contention-") as cache:
            _run(1, names, 1, cache)  # compile once; the rounds load from the disk cache
            for r in range(opts.rounds):
                order = ("1", "default") if r % 2 == 0 else ("default", "1")
                for setting in order:
                    got = _run(1 if setting == "1" else None, names, opts.reps, cache)
                    rows[setting].append(got)
                    cells = " ".join(f"{n} {got[n] * 1e3:7.3f}" for n in names)
                    print(f"round {r} threads={setting:>7}: {cells} (ms)", flush=True)
    finally:
        for p in busy:
            p.kill()
    print(f"load average after: {os.getloadavg()[0]:.1f}; busy processes beside: {opts.busy}")
    for n in names:
        one = statistics.median(r[n] for r in rows["1"])
        dflt = statistics.median(r[n] for r in rows["default"])
        print(
            f"{n:>10}: 1 thread {one * 1e3:7.3f} ms, default {dflt * 1e3:7.3f} ms, "
            f"default / 1 = {dflt / one:.2f}"
        )


if __name__ == "__main__":
    main()
