"""Run many fuzzed programs as ONE jitted function: one compile for a batch.

Compiling dominates the fuzzer's cost (~0.15 s of g++ per program; a translation unit of 20
kernels costs ~0.4 s), so a batch of programs is traced into one function that returns
every program's outputs. The programs share nothing, so each is still checked on its own.
"""

from __future__ import annotations

from _fuzz_check import STATS

import tracejit as tj
from tracejit.errors import CompileError, InternalError, TracejitError


def _joined(functions, arities):
    def run_all(*args):
        outs, start = [], 0
        for fn, n in zip(functions, arities):
            outs.append(fn(*args[start : start + n]))
            start += n
        return outs

    return run_all


def run_batch(functions, arg_lists, device: str, jit=tj.jit) -> list:
    """Each function's outputs on `device`, compiled together; None for one tracejit refuses
    with a named error (counted in STATS: a refusal is not a wrong result)."""
    joined = _joined(functions, [len(a) for a in arg_lists])
    flat = [a for args in arg_lists for a in args]
    try:
        return list(tj.device_get(jit(joined, device=device)(*flat)))
    except (CompileError, InternalError):
        raise  # generated code a compiler rejects, or a broken invariant: a bug, not a refusal
    except TracejitError:
        pass  # one program is refused: run each alone to test the others
    return [_run_one(fn, args, device, jit) for fn, args in zip(functions, arg_lists)]


def _run_one(fn, args, device, jit):
    try:
        return tj.device_get(jit(_joined([fn], [len(args)]), device=device)(*args))[0]
    except (CompileError, InternalError):
        raise
    except TracejitError as e:
        STATS[f"refused on {device}: {type(e).__name__}: {str(e)[:60]}"] += 1
        return None
