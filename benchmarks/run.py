"""CPU benchmarks: tracejit (device="cpu") side by side with NumPy, JAX and torch.compile.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/run.py
        [--quick] [--only W1,W4] [--systems tracejit,jax] [--threads 1,2] [--json PATH]

Every system runs in its own spawned process (never a fork: OpenMP runtimes hang a child
forked after a parallel region), once with 1 thread and once with 2, and each result is
checked against NumPy (allclose) before it is timed. Times are medians of several calls
after warm-up. W5 runs the MLP step's first call in fresh processes: cold (empty caches)
and warm (a second process reusing the first one's disk cache). The table goes to stdout,
every number to benchmarks/results/cpu.json. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SYSTEMS = ("tracejit", "numpy", "jax", "torch")
GROUPS = {"W1": ("w1",), "W2": ("softmax", "layernorm"), "W3": ("mlp",), "W4": ("dispatch",)}
W5_SYSTEMS = ("tracejit", "jax", "torch")  # NumPy compiles nothing
COPY_ELEMENTS = 1 << 24  # float32 elements of the bandwidth probe (64 MiB, beyond any cache)
W1_BYTES = 3 * (1 << 22) * 4  # W1 reads x and y and writes the result once: its floor traffic
WORKER_TIMEOUT_S = 420  # one system's process; torch.compile's cold compiles are the slow part
# XLA's CPU client ignores OMP_NUM_THREADS; these flags pin it to one thread
JAX_ONE_THREAD = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"


# ---------------------------------------------------------------- worker side (child process)


def _import_system(system: str, threads: int) -> str:
    """Import one system, set its thread count, and return its version."""
    if system == "tracejit":
        import tracejit

        return getattr(tracejit, "__version__", "dev")
    if system == "jax":
        import jax

        jax.config.update("jax_platforms", "cpu")
        return jax.__version__
    if system == "torch":
        import torch

        torch.set_num_threads(threads)
        return torch.__version__
    import numpy

    return numpy.__version__


def _median_call(built, reps: int, budget_s: float) -> dict:
    """Median seconds of one synchronized call, after two warm-up calls."""
    for _ in range(2):
        built.sync(built.call())
    times = []
    deadline = time.perf_counter() + budget_s
    while len(times) < reps and (len(times) < 10 or time.perf_counter() < deadline):
        t0 = time.perf_counter()
        built.sync(built.call())
        times.append(time.perf_counter() - t0)
    return {"median_s": statistics.median(times), "min_s": min(times), "reps": len(times)}


def _per_call(built, loops: int, batches: int) -> dict:
    """Median per-call seconds over batches of back-to-back calls (dispatch overhead)."""
    call, sync = built.call, built.sync
    for _ in range(loops // 10):
        sync(call())
    per = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(loops):
            out = call()
        sync(out)
        per.append((time.perf_counter() - t0) / loops)
    return {"median_s": statistics.median(per), "min_s": min(per), "reps": batches * loops}


def _bandwidth(reps: int) -> dict:
    """np.copyto of 2**24 float32: GB/s counting the read and the write."""
    import numpy as np

    src = np.ones(COPY_ELEMENTS, np.float32)
    dst = np.zeros_like(src)
    times = []
    for _ in range(reps + 2):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        times.append(time.perf_counter() - t0)
    t = statistics.median(times[2:])
    gbps = 2 * src.nbytes / t / 1e9
    return {"copy_s": t, "gb_per_s": gbps, "w1_floor_s": W1_BYTES / (gbps * 1e9)}


# Compiled functions stay alive until the worker ends with os._exit, so no system's teardown
# (freeing executables, JAX/torch shutdown) runs inside or between measurements.
_KEEP_ALIVE: list = []


def run_worker(args) -> dict:
    """Time the chosen workloads for one system in this process."""
    import workloads as W

    result = {"system": args.worker, "threads": args.threads, "workloads": {}}
    t0 = time.perf_counter()
    result["version"] = _import_system(args.worker, args.threads)
    result["import_s"] = time.perf_counter() - t0
    if args.worker == "numpy":
        result["bandwidth"] = _bandwidth(args.reps)
    for name in args.workloads.split(","):
        try:
            data = W.make_data(name)
            built = W.BUILDERS[args.worker](name, data)
            _KEEP_ALIVE.append(built)
            t0 = time.perf_counter()
            out = built.call()
            built.sync(out)
            first = time.perf_counter() - t0
            W.check(name, built.fetch(out), W.reference(name, data), data.get("params"))
            del out
            if name == "dispatch":
                timing = _per_call(built, args.loops, batches=9)
            else:
                timing = _median_call(built, args.reps, args.budget)
            result["workloads"][name] = {**timing, "first_call_s": first}
        except Exception as e:  # noqa: BLE001  (one broken workload must not hide the others)
            msg = f"{type(e).__name__}: {e}".splitlines()[0][:300]
            result["workloads"][name] = {"error": msg}
            print(f"[{args.worker}] {name}: {msg}", file=sys.stderr)
    return result


def run_w5_worker(args) -> dict:
    """First call of the MLP step in this fresh process, with the given disk cache dir."""
    import workloads as W

    t0 = time.perf_counter()
    version = _import_system(args.w5, 1)
    import_s = time.perf_counter() - t0
    if args.w5 == "jax":
        import jax

        jax.config.update("jax_compilation_cache_dir", args.cache)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    data = W.make_data("mlp")
    built = W.BUILDERS[args.w5]("mlp", data)
    _KEEP_ALIVE.append(built)
    t0 = time.perf_counter()
    out = built.call()
    built.sync(out)
    first = time.perf_counter() - t0
    W.check("mlp", built.fetch(out), W.reference("mlp", data), data["params"])
    return {"system": args.w5, "version": version, "import_s": import_s, "first_call_s": first}


# ---------------------------------------------------------------- driver side


def _child_env(system: str, threads: int, cache_root: Path) -> dict:
    env = dict(os.environ)
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):  # machine overrides skew OpenBLAS
        env.pop(var, None)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)
    env["TRACEJIT_CACHE_DIR"] = str(cache_root / "tracejit")
    env["TORCHINDUCTOR_CACHE_DIR"] = str(cache_root / "inductor")
    env["JAX_PLATFORMS"] = "cpu"
    if system == "jax" and threads == 1:
        env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " " + JAX_ONE_THREAD).strip()
    return env


def _spawn(flags: list[str], env: dict, label: str) -> dict:
    """Run one worker process; its JSON result, or {"error": ...}."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out_path = f.name
    cmd = [sys.executable, str(Path(__file__).resolve()), *flags, "--out", out_path]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(
            cmd, check=False, env=env, timeout=WORKER_TIMEOUT_S, capture_output=True
        )
        text = Path(out_path).read_text() if proc.returncode == 0 else ""
        if not text:
            tail = proc.stderr.decode(errors="replace").strip().splitlines()[-3:]
            return {"error": f"{label} exited {proc.returncode}: {' | '.join(tail)[:400]}"}
        return json.loads(text)
    except subprocess.TimeoutExpired:
        return {"error": f"{label} timed out after {WORKER_TIMEOUT_S} s"}
    finally:
        Path(out_path).unlink(missing_ok=True)
        print(f"  {label}: {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)


def _merge(old: dict | None, new: dict) -> dict:
    """Keep, per workload, the round with the lower median: bursts of load from other
    processes on a shared machine inflate whole rounds, never deflate them."""
    if old is None or "error" in old:
        return new
    if "error" in new:
        return old
    for name, entry in new["workloads"].items():
        prev = old["workloads"].get(name)
        if "error" in entry or (prev and "error" in prev):
            old["workloads"][name] = prev if prev and "error" in prev else entry
            continue  # a failure in any round is reported, never hidden by another round
        medians = (prev or {}).get("round_medians_s", [])
        if "median_s" in (prev or {}):
            medians = medians or [prev["median_s"]]
        if "median_s" in entry and (
            "median_s" not in (prev or {}) or entry["median_s"] < prev["median_s"]
        ):
            old["workloads"][name] = {**entry}
        old["workloads"][name]["round_medians_s"] = medians + [entry.get("median_s")]
    if "bandwidth" in new and new["bandwidth"]["gb_per_s"] > old["bandwidth"]["gb_per_s"]:
        old["bandwidth"] = new["bandwidth"]
    return old


def _available(system: str) -> bool:
    import importlib.util

    return system in ("numpy", "tracejit") or importlib.util.find_spec(system) is not None


def run_all(opts) -> dict:
    workloads = [w for g in opts.only if g in GROUPS for w in GROUPS[g]]
    systems = [s for s in opts.systems if _available(s)]
    report = {"meta": _meta(opts, systems), "runs": {}, "w5": {}}
    with tempfile.TemporaryDirectory(prefix="tracejit-bench-") as tmp:
        cache_root = Path(tmp) / "timing"
        for round_ in range(opts.rounds):
            for threads in opts.threads:
                for system in systems:
                    if not workloads and system != "numpy":
                        continue  # only the bandwidth probe (the NumPy worker) is needed
                    flags = ["--worker", system, "--threads", str(threads)]
                    flags += ["--workloads", ",".join(workloads or ["w1"])]
                    flags += ["--reps", str(opts.reps), "--loops", str(opts.loops)]
                    flags += ["--budget", str(opts.budget)]
                    env = _child_env(system, threads, cache_root)
                    res = _spawn(flags, env, f"{system} {threads}T round {round_ + 1}")
                    runs = report["runs"].setdefault(str(threads), {})
                    runs[system] = _merge(runs.get(system), res)
        if "W5" in opts.only:
            for system in (s for s in W5_SYSTEMS if s in systems):
                cache = Path(tmp) / f"w5-{system}"
                env = _child_env(system, 1, cache)
                flags = ["--w5", system, "--cache", str(cache / "jax")]
                cold = _spawn(flags, env, f"W5 {system} cold")
                warm = _spawn(flags, env, f"W5 {system} warm")
                report["w5"][system] = {"cold": cold, "warm": warm}
    report["meta"]["loadavg_after"] = os.getloadavg()
    return report


def _meta(opts, systems) -> dict:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "systems": systems,
        "quick": opts.quick,
        "loadavg_before": os.getloadavg(),
    }


def _pin_to_one_core() -> None:
    """The 1-thread runs use one core: XLA still runs large loop fusions on 2 cores under
    the one-thread XLA_FLAGS (process CPU time ~2x wall time), so a flag alone is not enough."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def _worker_main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--worker")
    p.add_argument("--w5")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--workloads", default="w1")
    p.add_argument("--reps", type=int, default=15)
    p.add_argument("--loops", type=int, default=2000)
    p.add_argument("--budget", type=float, default=1.5)
    p.add_argument("--cache")
    p.add_argument("--out", required=True)
    a = p.parse_args()
    if a.threads == 1:
        _pin_to_one_core()
    res = run_worker(a) if a.worker else run_w5_worker(a)
    Path(a.out).write_text(json.dumps(res))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # skip teardown: see _KEEP_ALIVE


def _csv(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def main() -> None:
    if "--worker" in sys.argv or "--w5" in sys.argv:
        _worker_main()
        return
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="smoke run: 1 thread, few reps, no W5")
    p.add_argument("--only", type=_csv, help="workload groups, e.g. W1,W4 (default: all)")
    p.add_argument("--systems", type=_csv, default=list(SYSTEMS), help="default: all")
    p.add_argument("--threads", type=_csv, help="thread counts (default 1,2; --quick: 1)")
    p.add_argument(
        "--rounds",
        type=int,
        help="processes per system and thread count, best median kept (default 2; --quick: 1)",
    )
    p.add_argument("--json", default=str(HERE / "results" / "cpu.json"), help="output path")
    opts = p.parse_args()
    groups = [*GROUPS, "W5"]
    opts.only = [g.upper() for g in opts.only] if opts.only else groups
    if opts.quick and not p.parse_args().only:
        opts.only = list(GROUPS)
    bad = [g for g in opts.only if g not in groups] + [s for s in opts.systems if s not in SYSTEMS]
    if bad:
        p.error(f"unknown {bad}; groups are {groups}, systems {list(SYSTEMS)}")
    if "numpy" not in opts.systems:
        opts.systems.append("numpy")  # the bandwidth floor is measured in the NumPy process
    opts.threads = [int(t) for t in opts.threads or (["1"] if opts.quick else ["1", "2"])]
    opts.rounds = opts.rounds or (1 if opts.quick else 2)
    opts.reps, opts.loops, opts.budget = (5, 300, 0.3) if opts.quick else (40, 2000, 1.0)
    t0 = time.perf_counter()
    report = run_all(opts)
    report["meta"]["wall_s"] = time.perf_counter() - t0
    from report import render  # the table; workers never import it

    print(render(report), flush=True)
    out = Path(opts.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1))
    print(f"JSON: {out}  ({report['meta']['wall_s']:.0f} s)")


if __name__ == "__main__":
    main()
