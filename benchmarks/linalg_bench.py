"""CPU benchmarks of sort, solve, cholesky, svd, svd values, eigvalsh and fft: tracejit
(device="cpu") next to NumPy, JAX and torch, at n = 1024, 2048, 4096; and of stacks of
small matrices (solve, cholesky, inv, det of (1000, n, n), n = 4, 8, 32).

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/linalg_bench.py
        [--sizes 1024,2048] [--small-sizes 4,8] [--ops sort,solve,bsolve]
        [--systems tracejit,numpy] [--reps 5]

Each system runs in its own spawned process with every library's default thread count (all
cores), on float32 operands (complex64 for fft; see OPS). Each result is checked against
NumPy's after one warm-up call (which compiles); then the systems' calls are interleaved, one
round of all per repetition, so a change of machine load hits all alike; times are medians
of `--reps` rounds (half as many, at least 3, at n = 4096). svd stops at 1024 (a 2048 SVD
takes a minute per call on a loaded 2-core machine), svdvals and eigvalsh at 2048. The
batched ops (`SMALL`, named b...) take their n from `--small-sizes`. The table goes to stdout, the numbers
to benchmarks/results/linalg.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SYSTEMS = ("tracejit", "numpy", "jax", "torch")
OPS = {  # name -> (operands, description)
    "sort": ("x", "sort (n, n) f32 along rows"),
    "solve": ("a b", "solve A x = b, (n, n) f32, b (n, 1)"),
    "cholesky": ("spd", "cholesky (n, n) f32"),
    "svd": ("a", "svd (n, n) f32, thin, U S Vh"),
    "svdvals": ("a", "svd (n, n) f32, values only"),
    "eigvalsh": ("spd", "eigvalsh (n, n) f32"),
    "fft": ("z", "fft2 (n, n) c64"),
    "bsolve": ("a b", "solve (B, n, n) f32, b (B, n, 1), B = {B}"),
    "bcholesky": ("spd", "cholesky (B, n, n) f32, B = {B}"),
    "binv": ("a", "inv (B, n, n) f32, B = {B}"),
    "bdet": ("a", "det (B, n, n) f32, B = {B}"),
}
SMALL = ("bsolve", "bcholesky", "binv", "bdet")  # stacks of BATCH small matrices
BATCH = 1000
MAX_N = {"svd": 1024, "svdvals": 2048, "eigvalsh": 2048}
PAUSE_S = 0.3  # before each timed call: the previous system's spinning threads go to sleep


def operands(op: str, n: int):
    import numpy as np

    rng = np.random.default_rng(n)
    lead = (BATCH,) if op in SMALL else ()
    a = rng.standard_normal(lead + (n, n), dtype=np.float32)
    eye = np.eye(n, dtype=np.float32)
    if op == "sort":
        return (a,)
    if op in ("solve", "bsolve", "binv", "bdet"):
        well = a + np.float32(2 * n**0.5) * eye
        if op in ("binv", "bdet"):
            return (well,)
        return well, rng.standard_normal(lead + (n, 1), dtype=np.float32)
    if op in ("cholesky", "eigvalsh", "bcholesky"):
        return ((a @ np.swapaxes(a, -1, -2)) / np.float32(n) + eye,)
    if op == "fft":
        return ((a + 1j * rng.standard_normal((n, n), dtype=np.float32)).astype(np.complex64),)
    return (a,)


def _numpy_like(m) -> dict:
    """op -> callable, for NumPy's API (numpy, tracejit.numpy and jax.numpy all have it)."""
    return {
        "sort": lambda x: m.sort(x, axis=-1),
        "solve": m.linalg.solve,
        "cholesky": m.linalg.cholesky,
        "svd": lambda a: m.linalg.svd(a, full_matrices=False),
        "svdvals": lambda a: m.linalg.svd(a, compute_uv=False),
        "eigvalsh": m.linalg.eigvalsh,
        "fft": m.fft.fft2,
        "bsolve": m.linalg.solve,
        "bcholesky": m.linalg.cholesky,
        "binv": m.linalg.inv,
        "bdet": m.linalg.det,
    }


def functions(system: str):
    """(op -> a callable on that system's arrays, a function waiting for its result)."""
    if system == "numpy":
        import numpy as np

        return _numpy_like(np), lambda out: out
    if system == "tracejit":
        import tracejit as tj
        import tracejit.numpy as tnp

        return {k: tj.jit(f, device="cpu") for k, f in _numpy_like(tnp).items()}, lambda o: o
    if system == "jax":
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_platforms", "cpu")
        return {k: jax.jit(f) for k, f in _numpy_like(jnp).items()}, jax.block_until_ready
    import torch

    fs = {
        "sort": lambda x: torch.sort(x, dim=-1).values,
        "solve": torch.linalg.solve,
        "cholesky": torch.linalg.cholesky,
        "svd": lambda a: torch.linalg.svd(a, full_matrices=False),
        "svdvals": torch.linalg.svdvals,
        "eigvalsh": torch.linalg.eigvalsh,
        "fft": torch.fft.fft2,
        "bsolve": torch.linalg.solve,
        "bcholesky": torch.linalg.cholesky,
        "binv": torch.linalg.inv,
        "bdet": torch.linalg.det,
    }
    return fs, lambda out: out


def _as_numpy(out):
    import numpy as np

    if isinstance(out, (tuple, list)):
        return [_as_numpy(o) for o in out]
    return np.asarray(
        out.numpy() if hasattr(out, "numpy") and not isinstance(out, np.ndarray) else out
    )


def _check(op, got, want) -> None:
    import numpy as np

    if op == "svd":  # singular vectors up to sign: compare s and the reconstruction
        u, s, vh = got
        np.testing.assert_allclose(s, want[1], rtol=2e-3, atol=2e-3 * want[1][0])
        np.testing.assert_allclose((u * s) @ vh, (want[0] * want[1]) @ want[2], atol=2e-2)
        return
    scale = float(np.abs(want).max())
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=2e-3 * scale)


def worker(system: str) -> None:
    """Serve the driver over stdin/stdout: `prep OP N` builds, warms up (compiles) and checks
    one case; `time OP N` times one call of it and answers the seconds."""
    import numpy as np

    fs, ready = functions(system)
    convert = (lambda x: x) if system != "torch" else __import__("torch").from_numpy
    cases = {}
    for line in sys.stdin:
        cmd, op, n = line.split()
        if cmd == "prep":
            args = operands(op, int(n))
            xs = [convert(a) for a in args]
            got = _as_numpy(ready(fs[op](*xs)))  # warm-up (compiles), checked
            want = _numpy_like(np)[op](*args)
            _check(op, got, [np.asarray(w) for w in want] if op == "svd" else want)
            cases[op, n] = xs
            answer = 0.0
        else:
            t0 = time.perf_counter()
            ready(fs[op](*cases[op, n]))
            answer = time.perf_counter() - t0
        print(answer, flush=True)


class Worker:
    """One system's worker process (spawned: each library sets up its own threads)."""

    def __init__(self, system: str):
        cmd = [sys.executable, __file__, "--worker", system]
        env = dict(os.environ, PYTHONPATH=str(HERE.parent))
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)  # fmt: skip

    def ask(self, cmd: str, op: str, n: int) -> float:
        self.proc.stdin.write(f"{cmd} {op} {n}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"a worker died on {cmd} {op} {n}")
        return float(line)


def sizes_of(op: str, sizes, small_sizes) -> list[int]:
    """The n an op runs at: `small_sizes` for the stacks of small matrices, else `sizes` up
    to the op's MAX_N."""
    if op in SMALL:
        return small_sizes
    return [n for n in sizes if n <= MAX_N.get(op, n)]


def measure(systems, ops, sizes, small_sizes, reps) -> dict:
    """system -> {"op/n": median seconds}: the systems' calls interleaved, one round of every
    system per repetition, so that a change of load hits all of them alike."""
    workers = {s: Worker(s) for s in systems}
    results = {s: {} for s in systems}
    for op in ops:
        for n in sizes_of(op, sizes, small_sizes):
            for w in workers.values():
                w.ask("prep", op, n)
            times = {s: [] for s in systems}
            for _ in range(reps if n < 4096 else max(3, reps // 2)):
                for s, w in workers.items():
                    time.sleep(PAUSE_S)
                    times[s].append(w.ask("time", op, n))
            for s in systems:
                results[s][f"{op}/{n}"] = statistics.median(times[s])
            print(op, n, {s: round(results[s][f"{op}/{n}"] * 1e3, 3) for s in systems}, flush=True)
    for w in workers.values():
        w.proc.stdin.close()
        w.proc.wait()
    return results


def table(results: dict, systems, ops, sizes, small_sizes) -> str:
    head = "| op | n | " + " | ".join(systems) + " | tracejit / fastest peer |"
    lines = [head, "|" + "---|" * (len(systems) + 3)]
    for op in ops:
        for n in sizes_of(op, sizes, small_sizes):
            key = f"{op}/{n}"
            if key not in results[systems[0]]:
                continue
            ms = {s: results[s][key] * 1e3 for s in systems}
            peers = [ms[s] for s in systems if s != "tracejit"]
            ratio = f"{ms['tracejit'] / min(peers):.2f}x" if "tracejit" in ms and peers else ""
            cells = " | ".join(f"{ms[s]:.3g}" for s in systems)
            lines.append(f"| {OPS[op][1].format(B=BATCH)} | {n} | {cells} | {ratio} |")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--ops", default=",".join(OPS))
    p.add_argument("--sizes", default="1024,2048,4096")
    p.add_argument("--small-sizes", default="4,8,32")
    p.add_argument("--systems", default=",".join(SYSTEMS))
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--json", default=str(HERE / "results" / "linalg.json"))
    a = p.parse_args()
    if a.worker:
        worker(a.worker)
        return
    ops, sizes = a.ops.split(","), [int(s) for s in a.sizes.split(",")]
    small = [int(s) for s in a.small_sizes.split(",")]
    systems = a.systems.split(",")
    load = os.getloadavg()[0]
    results = measure(systems, ops, sizes, small, a.reps)
    print(f"load average {load:.1f} before, {os.getloadavg()[0]:.1f} after; times in ms")
    print(table(results, systems, ops, sizes, small))
    Path(a.json).parent.mkdir(exist_ok=True)
    Path(a.json).write_text(json.dumps({"load": load, "results": results}, indent=1))


if __name__ == "__main__":
    main()
