"""First-call (compile) time of large unrolled programs, per phase, and how it grows (issue 10).

    python benchmarks/compile_scaling.py            # RNN 50/100/200/400, LSTM 30, fluid 2/5
    python benchmarks/compile_scaling.py --quick    # RNN 10/20/40, LSTM 5, fluid 1
    python benchmarks/compile_scaling.py --only rnn --sizes 50,100 --no-jax

Each measurement runs in a fresh process (`subprocess`): `grad` of the program's loss (see
compile_programs.py) is jitted and called once. "cold" uses an empty disk cache, "warm" a
second fresh process over the cache the cold one filled. Phases come from `tracejit.timing`
(trace includes autodiff; c++ is the compiler run); all are wall-clock seconds except "cpu",
the CPU seconds the cold call used (user + system, compiler processes included), which a
busy shared machine distorts much less than wall time; "import" is the warm process's
`import tracejit` (CPU seconds, the package's own modules beyond NumPy), which a fresh
process pays before its first call. Bytecode caching is on in the children (as for an
installed package; PYTHONDONTWRITEBYTECODE is dropped). JAX (`jax.jit(jax.grad(loss))`,
first call including XLA compilation) runs beside it when importable. The fitted growth exponent is the
least-squares slope of log(time) against log(steps) over the sizes of one program.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FULL = {"rnn": (50, 100, 200, 400), "lstm": (30,), "fluid": (2, 5)}
QUICK = {"rnn": (10, 20, 40), "lstm": (5,), "fluid": (1,)}
PHASES = ("trace", "autodiff", "passes", "fusion", "memory", "codegen", "c++")
CHILD_TIMEOUT_S = 3600


def _child(system: str, program: str, size: int) -> dict:
    """Runs in the child process: one first call, its total and phase times."""
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(HERE.parent))
    import compile_programs

    if system == "jax":
        import jax
        import jax.numpy as jnp

        loss, args = compile_programs.make(program, size, jnp)
        cpu0 = _cpu_seconds()
        t0 = time.perf_counter()
        out = jax.jit(jax.grad(loss))(*args)
        jax.block_until_ready(out)
        return {"total": time.perf_counter() - t0, "phases": {}, "cpu": _cpu_seconds() - cpu0}
    import numpy as np

    cpu_before_import = time.process_time()
    import tracejit as tj
    from tracejit import timing

    import_cpu = time.process_time() - cpu_before_import

    loss, args = compile_programs.make(program, size, np)
    step = tj.jit(tj.grad(loss))
    phase_cpu = _count_phase_cpu(timing)
    cpu0 = _cpu_seconds()
    with timing.collect() as times:
        t0 = time.perf_counter()
        step(*args)
        total = time.perf_counter() - t0
    return {
        "total": total,
        "phases": times,
        "phase_cpu": phase_cpu,
        "cpu": _cpu_seconds() - cpu0,
        "import": import_cpu,
    }


def _count_phase_cpu(timing) -> dict:
    """Also count each phase's CPU seconds (this process's threads: the C++ compiler, a
    child process, is not in it); the phases are single-threaded Python, so on a shared
    machine their CPU time is their work, where wall time is also the other processes'."""
    counts: dict[str, float] = {}
    wall_phase = timing.phase

    @contextlib.contextmanager
    def phase(name: str):
        c0 = time.process_time()
        try:
            with wall_phase(name):
                yield
        finally:
            counts[name] = counts.get(name, 0.0) + time.process_time() - c0

    timing.phase = phase
    return counts


def _cpu_seconds() -> float:
    """User + system CPU of this process and its finished children (the C++ compiler)."""
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _run_child(system: str, program: str, size: int, cache_dir: str) -> dict | None:
    env = dict(os.environ, TRACEJIT_CACHE_DIR=cache_dir)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # lazy imports would recompile their modules
    cmd = [sys.executable, __file__, "--child", system, program, str(size)]
    try:
        done = subprocess.run(
            cmd, env=env, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        return {"total": math.inf, "phases": {}, "error": "timeout"}
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["?"]
        return {"total": math.nan, "phases": {}, "error": tail[0]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def _jax_available() -> bool:
    try:
        import jax  # noqa: F401
    except ImportError:
        return False
    return True


def growth_exponent(sizes: list[int], times: list[float]) -> float:
    """Least-squares slope of log(time) on log(size).

    >>> round(growth_exponent([1, 2, 4], [3.0, 12.0, 48.0]), 6)
    2.0
    """
    xs = [math.log(s) for s in sizes]
    ys = [math.log(max(t, 1e-9)) for t in times]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx


def _fmt(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "timeout" if seconds == math.inf else "error"
    return f"{seconds:.2f}"


def measure(program: str, size: int, with_jax: bool) -> dict:
    with tempfile.TemporaryDirectory(prefix="tj-scaling-") as cache:
        cold = _run_child("tracejit", program, size, cache)
        warm = _run_child("tracejit", program, size, cache)
    row = {"program": program, "size": size, "cold": cold, "warm": warm}
    if with_jax:
        with tempfile.TemporaryDirectory(prefix="tj-scaling-") as cache:
            row["jax"] = _run_child("jax", program, size, cache)
    return row


def print_row(row: dict) -> None:
    cold = row["cold"]
    phases = " ".join(f"{_fmt(cold['phases'].get(p, 0.0)):>7}" for p in PHASES)
    jax = "n/a"
    if "jax" in row:
        jax = f"{_fmt(row['jax']['total'])}/{_fmt(row['jax'].get('cpu', math.nan))}"
    err = f"  ({cold['error']})" if "error" in cold else ""
    cpu = _fmt(cold.get("cpu", math.nan))
    warm = row["warm"]
    ratio = f"{100 * warm['total'] / cold['total']:.1f}/{_ratio(warm, cold)}"
    print(
        f"{row['program']:>6} {row['size']:>5} {_fmt(cold['total']):>8} {cpu:>7} "
        f"{_fmt(warm['total']):>7} {_fmt(warm.get('cpu', math.nan)):>7} {ratio:>11} "
        f"{_fmt(warm.get('import', math.nan)):>6} {jax:>12} | {phases}{err}",
        flush=True,
    )


def _ratio(warm: dict, cold: dict) -> str:
    """Warm / cold in percent of CPU seconds."""
    if "cpu" not in warm or "cpu" not in cold:
        return "?"
    return f"{100 * warm['cpu'] / cold['cpu']:.1f}"


def print_exponents(rows: list[dict]) -> None:
    for program in sorted({r["program"] for r in rows}):
        mine = [r for r in rows if r["program"] == program and math.isfinite(r["cold"]["total"])]
        if len(mine) < 2:
            continue
        sizes = [r["size"] for r in mine]
        parts = [f"total {growth_exponent(sizes, [r['cold']['total'] for r in mine]):.2f}"]
        if all("cpu" in r["cold"] for r in mine):
            parts.append(f"cpu {growth_exponent(sizes, [r['cold']['cpu'] for r in mine]):.2f}")
        for p in PHASES:
            ts = [r["cold"]["phases"].get(p, 0.0) for r in mine]
            if min(ts) > 1e-3:
                parts.append(f"{p} {growth_exponent(sizes, ts):.2f}")
        for p in PHASES[:-1]:  # CPU seconds (not the C++ compiler's: another process)
            ts = [r["cold"].get("phase_cpu", {}).get(p, 0.0) for r in mine]
            if min(ts) > 1e-3:
                parts.append(f"{p} cpu {growth_exponent(sizes, ts):.2f}")
        if all("jax" in r and math.isfinite(r["jax"]["total"]) for r in mine):
            parts.append(f"jax {growth_exponent(sizes, [r['jax']['total'] for r in mine]):.2f}")
        print(f"growth exponent, {program} {sizes[0]}..{sizes[-1]} steps: " + ", ".join(parts))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    ap.add_argument("--only", default="rnn,lstm,fluid", help="programs, comma-separated")
    ap.add_argument("--sizes", default=None, help="step counts for every program chosen")
    ap.add_argument("--no-jax", action="store_true")
    ap.add_argument("--json", default=None, help="also write the rows to this file")
    ap.add_argument("--child", nargs=3, metavar=("SYSTEM", "PROGRAM", "SIZE"), help="internal")
    opts = ap.parse_args()
    if opts.child:
        system, program, size = opts.child
        print(json.dumps(_child(system, program, int(size))))
        return
    table = QUICK if opts.quick else FULL
    with_jax = not opts.no_jax and _jax_available()
    print("times in seconds; first call in a fresh process (cold: empty disk cache)")
    print("warm%: warm / cold first call, in percent of wall / of CPU seconds")
    print(
        f"{'prog':>6} {'steps':>5} {'cold':>8} {'cpu':>7} {'warm':>7} {'cpu':>7} {'warm%':>11} "
        f"{'import':>6} {'jax wall/cpu':>12} | " + " ".join(f"{p:>7}" for p in PHASES)
    )
    rows = []
    for program in opts.only.split(","):
        sizes = [int(s) for s in opts.sizes.split(",")] if opts.sizes else table[program]
        for size in sizes:
            rows.append(measure(program, size, with_jax))
            print_row(rows[-1])
    print_exponents(rows)
    if opts.json:
        Path(opts.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
