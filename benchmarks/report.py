"""The benchmark table and the issue's targets, from the JSON report that run.py collects.

>>> text, targets = summarize({"meta": {}, "runs": {}, "w5": {}})
>>> targets
[]
"""

from __future__ import annotations

SYSTEMS = ("tracejit", "numpy", "jax", "torch")
PEERS = ("numpy", "jax", "torch")
HEAD = ("tracejit", "NumPy", "JAX", "torch.compile")
# (workload key, row label, scale to the unit, unit)
ROWS = (
    ("w1", "W1 tanh(x*y+0.5x)*2-y 2^22", 1e3, "ms"),
    ("softmax", "W2 softmax 4096x1024", 1e3, "ms"),
    ("layernorm", "W2 layernorm 4096x1024", 1e3, "ms"),
    ("mlp", "W3 MLP step, batch 256", 1e3, "ms"),
    ("dispatch", "W4 dispatch x+1 on 8", 1e6, "us"),
)
W1_FLOOR_FACTOR = 1.2  # issue 4: W1 within 1.2x of the copy-bandwidth floor
W4_TARGET_S = 2e-6
W5_TARGETS_S = {"cold": 1.0, "warm": 0.1}


def _cell(entry) -> tuple[float | None, str]:
    """(seconds or None, why not) of one workload result."""
    if entry is None:
        return None, "n/a"
    if "error" in entry:
        return None, "WRONG" if entry["error"].startswith("AssertionError") else "ERR"
    return entry.get("median_s", entry.get("first_call_s")), ""


def _fmt(value: float | None, scale: float, why: str) -> str:
    if value is None:
        return why
    v = value * scale
    return f"{v:.3g}" if v < 1000 else f"{v:.0f}"


def _times(report, threads: str, key: str) -> dict[str, tuple[float | None, str]]:
    runs = report["runs"].get(threads, {})
    out = {}
    for system in SYSTEMS:
        run = runs.get(system)
        if run is None:
            out[system] = (None, "n/a")
        elif "error" in run:
            out[system] = (None, "ERR")
        else:
            out[system] = _cell(run["workloads"].get(key))
    return out


def _floor(report, threads: str) -> float | None:
    bw = report["runs"].get(threads, {}).get("numpy", {}).get("bandwidth")
    return bw["w1_floor_s"] if bw else None


def _target(key: str, t: dict, floor: float | None) -> tuple[str, bool | None]:
    """(target text, met?) for the 1-thread row of `key`; met is None when unmeasurable."""
    tj = t["tracejit"][0]
    jax, torch = t["jax"][0], t["torch"][0]
    if key == "w1":
        if floor is None:
            return "<= 1.2x floor and <= JAX", None
        text = f"<= {W1_FLOOR_FACTOR}x floor ({W1_FLOOR_FACTOR * floor * 1e3:.2f} ms) & <= JAX"
        ok = tj is not None and tj <= W1_FLOOR_FACTOR * floor and (jax is None or tj <= jax)
        return text, ok if tj is not None else None
    if key in ("softmax", "layernorm"):
        peers = [v for v in (jax, torch) if v is not None]
        if tj is None or not peers:
            return "<= min(JAX, torch.compile)", None
        return "<= min(JAX, torch.compile)", tj <= min(peers)
    if key == "mlp":
        return "<= JAX", None if tj is None or jax is None else tj <= jax
    return f"<= {W4_TARGET_S * 1e6:.0f} us", None if tj is None else tj <= W4_TARGET_S


def _verdict(ok: bool | None) -> str:
    return {True: "ok", False: "MISS", None: "?"}[ok]


def summarize(report: dict) -> tuple[str, list[dict]]:
    """The table as text, and the target checks as a list of dicts (for the JSON)."""
    lines, targets, notes = [], [], []
    head = f"{'workload':<32}{'thr':>4}" + "".join(f"{h:>15}" for h in HEAD)
    head += f"{'tj/best':>9}  target (1 thread)"
    lines += [head, "-" * len(head)]
    for threads in sorted(report["runs"], key=int):
        floor = _floor(report, threads)
        for key, label, scale, unit in ROWS:
            t = _times(report, threads, key)
            if all(v is None and why == "n/a" for v, why in t.values()):
                continue
            row = f"{label + f' ({unit})':<32}{threads:>4}"
            row += "".join(f"{_fmt(v, scale, why):>15}" for v, why in t.values())
            peers = [t[p][0] for p in PEERS if t[p][0] is not None]
            tj = t["tracejit"][0]
            row += f"{tj / min(peers):>8.2f}x" if tj is not None and peers else f"{'':>9}"
            if threads == "1":
                text, ok = _target(key, t, floor)
                row += f"  {text}: {_verdict(ok)}"
                targets.append({"workload": key, "target": text, "met": ok, "tracejit_s": tj})
            lines.append(row)
        bw = report["runs"].get(threads, {}).get("numpy", {}).get("bandwidth")
        if bw:
            lines.append(
                f"{'copy bandwidth (GB/s)':<32}{threads:>4}{'':>15}{bw['gb_per_s']:>15.1f}"
                f"   -> W1 floor {bw['w1_floor_s'] * 1e3:.2f} ms (3 x 2^22 x 4 B / bandwidth)"
            )
        notes += _errors(report["runs"].get(threads, {}), f"{threads}T")
    lines += _w5_rows(report, targets, notes)
    if notes:
        lines += ["", "errors:"] + [f"  {n}" for n in notes]
    return "\n".join(lines), targets


def _w5_rows(report, targets, notes) -> list[str]:
    lines = []
    for phase in ("cold", "warm"):
        t = {}
        for system in SYSTEMS:
            entry = report["w5"].get(system, {}).get(phase)
            t[system] = _cell(entry)
            if entry and "error" in entry:
                notes.append(f"W5 {phase} {system}: {entry['error']}")
        if all(why == "n/a" for _, why in t.values()):
            continue
        t["numpy"] = (None, "-")
        row = f"{f'W5 first call W3, {phase} (s)':<32}{'1':>4}"
        row += "".join(f"{_fmt(v, 1.0, why):>15}" for v, why in t.values())
        tj = t["tracejit"][0]
        peers = [t[p][0] for p in ("jax", "torch") if t[p][0] is not None]
        row += f"{tj / min(peers):>8.2f}x" if tj is not None and peers else f"{'':>9}"
        limit = W5_TARGETS_S[phase]
        ok = None if tj is None else tj <= limit
        row += f"  <= {limit} s: {_verdict(ok)}"
        targets.append({"workload": f"w5_{phase}", "target": f"<= {limit} s", "met": ok,
                        "tracejit_s": tj})  # fmt: skip
        lines.append(row)
    return lines


def _errors(runs: dict, tag: str) -> list[str]:
    notes = []
    for system, run in runs.items():
        if "error" in run:
            notes.append(f"{tag} {system}: {run['error']}")
            continue
        for key, entry in run.get("workloads", {}).items():
            if "error" in entry:
                notes.append(f"{tag} {system} {key}: {entry['error']}")
    return notes


def render(report: dict) -> str:
    """The table, plus the targets stored into `report["targets"]`."""
    text, targets = summarize(report)
    report["targets"] = targets
    meta = report.get("meta", {})
    top = (
        f"tracejit CPU benchmarks  {meta.get('date', '')}  {meta.get('cpu', '')}, "
        f"{meta.get('cores', '?')} cores, load {_load(meta)}\n"
        "medians after warm-up; every result checked against NumPy before timing; "
        "tj/best = tracejit / fastest peer\n"
    )
    return top + text


def _load(meta) -> str:
    before, after = meta.get("loadavg_before"), meta.get("loadavg_after")
    if not before:
        return "?"
    return f"{before[0]:.1f} before / {after[0]:.1f} after" if after else f"{before[0]:.1f}"
