"""The runtime's thread pool (cpp/pool.h) that generated parallel loops run on: kernel results
do not depend on the thread count (blocks depend only on sizes; a matmul split into slabs
calls BLAS per slab, whose edge kernels may round differently), and concurrent calls from
several Python threads (one runs its loops alone while another holds the pool) stay
correct."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np

import tracejit as tj

# Big enough for every parallel path: elementwise blocks, a full reduction in per-block
# partials (tj_parallel_parts) and a matmul split into slabs.
_PROGRAM = """
import sys
import numpy as np
import tracejit as tj

@tj.jit
def f(x, a, b):
    y = np.tanh(x * 1.5) - x
    return y, np.sum(y), np.exp(a @ b) * 0.5

rng = np.random.default_rng(0)
x = rng.standard_normal(1 << 18).astype(np.float32)
a = rng.standard_normal((256, 192)).astype(np.float32)
b = rng.standard_normal((192, 160)).astype(np.float32) * 0.1
outs = f(x, a, b)
sys.stdout.buffer.write(b"".join(np.ascontiguousarray(o).tobytes() for o in outs))
"""


def _run(threads: int, cache_dir: str) -> bytes:
    env = dict(os.environ, TRACEJIT_NUM_THREADS=str(threads), TRACEJIT_CACHE_DIR=cache_dir)
    env["TRACEJIT_POOL_ADAPT"] = "0"  # split every big loop, even on a loaded machine
    env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", _PROGRAM], env=env, capture_output=True, check=False, timeout=300
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return done.stdout


def test_results_do_not_depend_on_the_thread_count(tmp_path):
    one, four = (np.frombuffer(_run(n, str(tmp_path)), np.float32) for n in (1, 4))
    n = (1 << 18) + 1
    assert one.size == n + 256 * 160
    assert one[:n].tobytes() == four[:n].tobytes()  # elementwise blocks and block partials
    np.testing.assert_allclose(one[n:], four[n:], rtol=1e-5)


def test_concurrent_calls_from_python_threads():
    @tj.jit
    def f(x):
        return np.sqrt(np.abs(x)) + x * 0.25

    xs = [np.full(1 << 17, float(i), np.float32) for i in range(6)]
    want = [np.sqrt(np.abs(x)) + x * np.float32(0.25) for x in xs]
    f(xs[0])  # compile once, outside the threads
    got: dict[int, np.ndarray] = {}

    def call(i: int) -> None:
        for _ in range(20):
            got[i] = f(xs[i])

    threads = [threading.Thread(target=call, args=(i,)) for i in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, w in enumerate(want):
        np.testing.assert_array_equal(got[i], w)
