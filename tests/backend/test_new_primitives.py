"""A new primitive is one entry: `cube` (elementwise) and `twice` (its own kernel) are each
registered with one `register(...)` call and checked end to end on every device under test
(`cpu`, and `cuda` on a GPU or the CUDA emulator): traced, evaluated eagerly, compiled into
kernels (no NumPy callback), batched, differentiated against finite differences, unregistered.
"""

from __future__ import annotations

import numpy as np
import pytest
from _finite_diff import numeric_grad

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.backend_cpu import schedule_graph
from tracejit.backend_cpu.codegen import generate
from tracejit.backend_cpu.gather import CPU_KERNELS
from tracejit.backend_cuda import cuda_source
from tracejit.backend_cuda.gather import CUDA_KERNELS
from tracejit.batching import BATCH_RULES
from tracejit.errors import UnsupportedError
from tracejit.ir import fusion
from tracejit.ir import kernel as K
from tracejit.ir.autodiff import VJP_RULES
from tracejit.ir.c_render import C_RULES, c_type
from tracejit.ir.primitives import (
    ELEMENTWISE,
    FLOAT,
    KERNEL,
    OPAQUE,
    PRIMITIVES,
    RULE_TABLES,
    elementwise_rule,
    register,
    unregister,
)
from tracejit.tracer.core import bind

# ---------------------------------------------------------------- a new elementwise primitive


def _cube_vjp(e, ct, x, *, out):
    return [e.mul(ct, e.mul(e.full(3.0, x), e.mul(x, x)))]


def _cube_c(args, dtype, out_dtype, attrs, uses, dialect):
    return f"({args[0]} * {args[0]} * {args[0]})"


@pytest.fixture
def cube():
    """The one entry that adds `test_cube` (x * x * x): rule, reference, VJP, C rendering."""
    prim = register(
        "test_cube",
        ELEMENTWISE,
        elementwise_rule("test_cube", FLOAT),
        lambda x: x * x * x,
        rules={VJP_RULES: _cube_vjp, C_RULES: _cube_c},
    )
    yield prim
    unregister(prim)


def _has_no_host_step(graph) -> bool:
    return not any(isinstance(s, K.Fallback) for s in fusion.fuse(graph).steps)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_new_elementwise_primitive_is_one_entry(cube, dtype, device):
    x = np.linspace(-1.7, 2.3, 12, dtype=dtype).reshape(3, 4)

    def f(x):
        return bind(cube, x * 0.5) + x  # fused with its neighbours into one loop

    h = x * dtype(0.5)
    want = h * h * h + x
    # traced, and evaluated eagerly by its reference implementation
    assert "test_cube" in str(tj.make_ir(f)(x))
    np.testing.assert_array_equal(f(x), want)
    # compiled into the loop of the test device (no NumPy callback): the same bits as NumPy
    jitted = tj.jit(f, device=device)
    assert _has_no_host_step(jitted.lower(x).graph)
    np.testing.assert_array_equal(tj.device_get(jitted(x)), want)
    # batched by the elementwise default rule
    np.testing.assert_array_equal(tj.vmap(f)(x), want)


def test_new_elementwise_primitive_differentiates(cube, device):
    x = np.linspace(-1.3, 1.9, 6)

    def loss(x):
        return tnp.sum(bind(cube, x) * np.arange(1.0, 7.0))

    fd = numeric_grad(lambda v: float(loss(v)), x)
    np.testing.assert_allclose(tj.grad(loss)(x), fd, rtol=1e-7, atol=1e-8)
    compiled = tj.jit(tj.grad(loss), device=device)
    np.testing.assert_allclose(tj.device_get(compiled(x)), fd, rtol=1e-7, atol=1e-8)
    # its VJP is written with primitives, so it differentiates again: d2/dx2 sum(w x^3) = 6 w x
    second = tj.grad(lambda x: tnp.sum(tj.grad(loss)(x)))(x)
    np.testing.assert_allclose(second, 6.0 * x * np.arange(1.0, 7.0), rtol=1e-12)


def test_new_elementwise_primitive_unregisters_cleanly(cube):
    assert set(cube.rules()) == {"VJP", "batching", "C rendering"}
    unregister(cube)
    assert "test_cube" not in PRIMITIVES and cube.rules() == {}
    assert all(cube not in table and "test_cube" not in table for table in RULE_TABLES)
    with pytest.raises(UnsupportedError, match="no primitive named 'test_cube'"):
        bind("test_cube", np.ones(2))
    again = register("test_cube", ELEMENTWISE, elementwise_rule("test_cube", FLOAT), abs)
    try:
        assert PRIMITIVES["test_cube"] is again and again not in C_RULES
    finally:
        unregister(again)


# ---------------------------------------------------------------- a new primitive with a kernel


def _twice_cpu(step, buffers, name):
    (x,), (out,) = step.inputs, step.outputs
    t = c_type(buffers[x].dtype)
    helper = (
        f"static void {name}_twice(const {t}* x, {t}* out, int64_t n) {{\n"
        "  for (int64_t i = 0; i < n; ++i) out[i] = x[i] + x[i];\n}"
    )
    return f"{name}_twice(b{x}, b{out}, {buffers[x].size}LL);", helper


def _twice_cuda(step, buffers):
    t = c_type(buffers[step.inputs[0]].dtype)
    units = buffers[step.inputs[0]].size
    return [f"const {t}* x", f"{t}* out"], units, ["out[u] = x[u] + x[u];"]


@pytest.fixture
def twice():
    """The one entry that adds `test_twice` (x + x) with its own kernel in each backend."""
    prim = register(
        "test_twice",
        OPAQUE,
        lambda avals: avals[0],
        lambda x: x + x,
        fusion=KERNEL,
        rules={
            VJP_RULES: lambda e, ct, x, *, out: [e.add(ct, ct)],
            BATCH_RULES: lambda b, size, xs, dims: ([b.test_twice(xs[0])], [dims[0]]),
            CPU_KERNELS: _twice_cpu,
            CUDA_KERNELS: _twice_cuda,
        },
    )
    yield prim
    unregister(prim)


def test_new_primitive_with_its_own_kernel_is_one_entry(twice, device):
    x = np.linspace(-2.0, 3.0, 10, dtype=np.float32).reshape(2, 5)

    def f(x):
        return bind(twice, x * 3.0) - x

    want = (x * np.float32(3.0) + x * np.float32(3.0)) - x
    jitted = tj.jit(f, device=device)
    graph = jitted.lower(x).graph
    steps = fusion.fuse(graph).steps
    assert [s.prim for s in steps if isinstance(s, K.Fallback)] == ["test_twice"]
    # each backend runs the primitive's kernel, not a NumPy callback
    assert "_twice(b" in generate(schedule_graph(graph))
    assert "out[u] = x[u] + x[u];" in cuda_source(graph).source
    np.testing.assert_array_equal(tj.device_get(jitted(x)), want)
    np.testing.assert_array_equal(tj.vmap(f)(x), want)
    x64 = x.astype(np.float64)
    g = tj.jit(tj.grad(lambda x: tnp.sum(f(x) * x)), device=device)(x64)
    np.testing.assert_allclose(tj.device_get(g), 10.0 * x64, rtol=1e-12)  # d/dx 5x^2
