"""jit's fast paths hand the leaves to the executable as they are, so only leaves already of
their traced dtype are keyed for them: a big-endian array is converted on every call (the
compiled code reads native floats; a plain big-endian argument's second call raised
ArgumentError before)."""

import numpy as np

import tracejit as tj


def test_big_endian_arguments_are_converted_on_every_call():
    f, g = tj.jit(lambda p, x: p["a"] * x - p["b"]), tj.jit(lambda x: x * 2)
    a, b, x = np.arange(4.0, dtype=np.float32), np.ones(4, np.float32), np.full(4, 3, np.float32)
    for _ in range(3):  # native, then big-endian twice (the second one would be a fast hit)
        for p in ({"a": a, "b": b}, {"a": a.astype(">f4"), "b": b.astype(">f4")}):
            np.testing.assert_array_equal(f(p, x.astype(p["a"].dtype)), a * x - b)
            np.testing.assert_array_equal(g(p["a"]), 2 * a)
