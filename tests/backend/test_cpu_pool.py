"""The runtime's thread pool (cpp/pool.h): results do not depend on how a loop ran.

A parallel loop runs split across the pool's threads, or on the caller alone (one thread, a
nested loop, after the pool measured that splitting that loop lost to one thread, or while
other tasks fill every core: both depend on the machine's load). Blocks are the same either
way, so every run gives the same bits; these tests run many calls in fresh processes with one
and with two threads, adaptive (the default) and always splitting (TRACEJIT_POOL_ADAPT=0).
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import tracejit as tj

_MANY_CALLS = """
import hashlib, sys
import numpy as np
import tracejit as tj

rng = np.random.default_rng(0)
x = rng.standard_normal((1024, 700)).astype(np.float32)
f = tj.jit(lambda x: (tj.numpy.exp(x * 0.25).sum(axis=1), tj.numpy.tanh(x) * 2.0))
first = [np.asarray(o).tobytes() for o in f(x)]
for _ in range(400):  # enough loops for the pool to split, measure and fall back
    assert [np.asarray(o).tobytes() for o in f(x)] == first, "a call gave different bits"
sums, tanh = f(x)
assert np.allclose(sums, np.exp(x.astype(np.float64) * 0.25).sum(axis=1), rtol=1e-4)
assert np.allclose(tanh, np.tanh(x) * 2.0, rtol=1e-5, atol=1e-6)
print(hashlib.sha256(b"".join(first)).hexdigest())
"""


@functools.cache
def _run(threads: int, adapt: str = "1") -> str:
    env = dict(os.environ, TRACEJIT_CACHE_DIR=str(tj.config.cache_dir))
    env["TRACEJIT_NUM_THREADS"] = str(threads)
    env["TRACEJIT_POOL_ADAPT"] = adapt
    run = subprocess.run(
        [sys.executable, "-c", _MANY_CALLS],
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])
    return run.stdout.split()[-1]


@pytest.mark.parametrize("threads, adapt", [(2, "1"), (2, "0"), (3, "0")])
def test_many_parallel_calls_give_the_one_thread_bits(threads, adapt):
    assert _run(threads, adapt) == _run(1)


def test_the_program_splits_its_rows_across_the_pool():
    """The program above must reach the pool in many blocks (else the test proves little)."""
    from tracejit.backend_cpu import codegen

    x = np.zeros((1024, 700), np.float32)
    fn = tj.jit(lambda x: (tj.numpy.exp(x * 0.25).sum(axis=1), tj.numpy.tanh(x) * 2.0))
    calls = re.findall(r"tj_parallel\w*\((\d+)LL, (\d+)LL", fn.lower(x).compile().source())
    assert calls, "no parallel loop in the generated code"
    units, work = map(int, calls[0])
    assert units >= codegen.PARALLEL_BLOCKS and work >= codegen.PARALLEL_MIN_WORK
