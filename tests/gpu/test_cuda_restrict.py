"""Read-only inputs are `const T* __restrict__` unless the call writes an output into their
memory (donation): a call without donation gets restrict on every read-only input, a donating
call gets kernels that read the donated input without it where they write its output
(backend_cuda/sharing.py, CudaExecutable.for_outputs). The emulator refuses a restrict
pointer that aliases a written one, as a GPU may then read stale data. Values: NumPy."""

from __future__ import annotations

import re

import numpy as np
import pytest
from _cuda_programs import needs_gpu
from _devices import EMULATED

import tracejit as tj
import tracejit.numpy as tnp

pytestmark = needs_gpu


def _params(source: str) -> list[str]:
    """The parameters of every kernel of `source`, as written."""
    heads = re.findall(r"__global__ void (?:__launch_bounds__\(\d+\) )?\w+\(([^)]*)\)", source)
    return [p.strip() for head in heads for p in head.split(",")]


def _restrict(source: str, buf: int) -> set[bool]:
    """Whether each declaration of read-only buffer `buf` in `source` is restrict."""
    found = {"__restrict__" in p for p in _params(source) if re.search(rf"\bb{buf}$", p)}
    assert found, f"b{buf} is never a parameter"
    return found


SGD = (lambda p, g: p - 0.1 * g, "elementwise")
SOFTMAX = (lambda p, g: tj.nn.softmax(p) * g, "row kernel")


@pytest.mark.parametrize("fun", [SGD, SOFTMAX], ids=lambda f: f[1])
def test_a_donating_call_reads_the_donated_input_without_restrict(fun):
    import cupy

    fun = fun[0]
    p0 = np.linspace(-1.0, 1.0, 24).reshape(3, 8)
    g = np.arange(24.0).reshape(3, 8)
    exe = tj.jit(fun, device="cuda").lower(p0, g).compile().executable
    p_id, g_id = exe.schedule.inputs
    assert _restrict(exe.source(), p_id) == {True}  # no donation: nothing shares memory
    assert _restrict(exe.source(), g_id) == {True}
    p = cupy.asarray(p0)
    assert exe.for_outputs([p, g], [None]) is exe
    donating = exe.for_outputs([p, g], [p])
    assert _restrict(donating.source(), p_id) == {False}
    assert _restrict(donating.source(), g_id) == {True}  # its shape, but never written over
    assert exe.for_outputs([p, g], [p]) is donating  # generated once
    where = p.data.ptr
    (out,) = exe([p, g], [p])
    assert out.data.ptr == where
    np.testing.assert_allclose(tj.device_get(out), np.asarray(fun(p0, g)), rtol=1e-12)


@pytest.mark.skipif(not EMULATED, reason="the aliasing check is the emulator's")
def test_the_emulator_refuses_the_restrict_program_on_donated_memory():
    # what the check guards against: the program made for calls without donation, run with
    # its output in the input's memory (run_plain skips for_outputs)
    import cupy

    p0, g = np.ones(8), np.arange(8.0)
    exe = tj.jit(SGD[0], device="cuda").lower(p0, g).compile().executable
    p = cupy.asarray(p0)
    with pytest.raises(RuntimeError, match="restrict parameter 0 aliases a buffer the kernel"):
        exe.run_plain([p, g], [p])
    (out,) = exe([p, g], [p])  # the donating program
    np.testing.assert_allclose(tj.device_get(out), p0 - 0.1 * g)


def test_donate_argnums_end_to_end_writes_in_place_with_the_right_values():
    import cupy

    step = tj.jit(lambda p, g: (p - 0.1 * g, tnp.sum(g * p)), donate_argnums=0, device="cuda")
    p0, g = np.linspace(0.0, 1.0, 16), np.full(16, 2.0)
    p = cupy.asarray(p0)
    where = p.data.ptr
    new, dot = step(p, g)
    assert new.data.ptr == where
    np.testing.assert_allclose(tj.device_get(new), p0 - 0.2, rtol=1e-15)
    np.testing.assert_allclose(float(tj.device_get(dot)), 2.0 * p0.sum(), rtol=1e-14)
