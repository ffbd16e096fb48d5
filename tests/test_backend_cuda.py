"""The CUDA backend: generated source (anywhere), nvcc/NVRTC compiles (CI), execution (GPU).

Three tiers, each skipping with its reason when its tool is missing:

* source-text tests run everywhere (codegen needs neither CuPy nor a GPU);
* every kernel generated for the test programs below compiles with `nvcc --cubin -arch=sm_90`
  and with NVRTC (what the backend runs at run time, with its IEEE float options) when its
  library loads;
* execution tests compare `jit(device="cuda")` with the NumPy reference interpreter and run
  only with CuPy and a GPU (`benchmarks/gpu_check.sh` runs them on an H100/H200).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.backend_cuda import cuda_source, nvrtc
from tracejit.devices import cuda_available
from tracejit.errors import DeviceError
from tracejit.ir.primitives import BINARY, UNARY
from tracejit.tracer.core import bind

DTYPES = [np.bool_, np.int32, np.int64, np.float32, np.float64]
NVCC = shutil.which("nvcc")
GPU = cuda_available()
needs_gpu = pytest.mark.skipif(not GPU, reason="needs CuPy and a CUDA GPU (none found)")


def _names(table: dict, dtype) -> list[str]:
    kind = np.dtype(dtype).kind
    return sorted(name for name, (kinds, _, _) in table.items() if kind in kinds)


def program(fun, *args):
    """The CUDA program generated for `fun` at `args` (after the optimization passes)."""
    return cuda_source(tj.jit(fun).lower(*args).graph)


def lazy(shape, dtype=np.float32):
    """An array of `shape` that occupies no memory: tracing only reads shape and dtype."""
    return np.broadcast_to(np.zeros((), dtype), shape)


# ---------------------------------------------------------------- the test programs


def _unary(dtype):
    names = _names(UNARY, dtype)
    return lambda x: [bind(n, x) for n in names]


def _binary(dtype):
    names = _names(BINARY, dtype)
    return lambda x, y: [bind(n, x, y) for n in names]


def _convert(x):
    return [bind("convert", x, dtype=np.dtype(d)) for d in DTYPES] + [
        bind("select", bind("ne", x, x), x, x)
    ]


def _reductions(x):
    outs = []
    for axes in [(0,), (1,), (0, 1), (0, 2), (2,)]:
        for prim in ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod"):
            outs.append(bind(prim, x, axes=axes))
    for axis in range(3):
        outs += [bind("argmax", x, axis=axis), bind("argmin", x, axis=axis)]
    return outs


def _rowwise_last(x, g, b):
    """Reductions over the last axis only: valid for any number of rows, 0 included."""
    mu = tnp.mean(x, axis=-1, keepdims=True)
    var = tnp.var(x, axis=-1, keepdims=True)
    return (
        tj.nn.softmax(x, axis=-1),
        (x - mu) / tnp.sqrt(var + 1e-5) * g + b,
        tj.nn.log_softmax(x, axis=-1),
        tj.nn.logsumexp(x, axis=-1),
    )


def _rowwise(x, g, b):
    return (*_rowwise_last(x, g, b), tj.nn.softmax(x, axis=0), tnp.argmax(x, axis=-1))


def _gather(x, i):
    return (
        x[i] * 2.0,
        tnp.take_along_axis(x, (x > 0).astype(np.int64), axis=1),
        tnp.sum(x[:, i], axis=0),
    )


def mlp_loss(params, x, y):
    h = tnp.maximum(x @ params["w1"] + params["b1"], 0.0)
    logits = h @ params["w2"] + params["b2"]
    return -tnp.mean(tnp.sum(y * tj.nn.log_softmax(logits), axis=-1))


def mlp_step(params, x, y):
    loss, grads = tj.value_and_grad(mlp_loss)(params, x, y)
    return loss, tj.tree_map(lambda p, g: p - 0.1 * g, params, grads)


def mlp_args(batch=8, n_in=5, hidden=16, n_out=4, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    params = {
        "w1": rng.normal(size=(n_in, hidden)).astype(dtype) * 0.5,
        "b1": rng.normal(size=(hidden,)).astype(dtype) * 0.1,
        "w2": rng.normal(size=(hidden, n_out)).astype(dtype) * 0.5,
        "b2": rng.normal(size=(n_out,)).astype(dtype) * 0.1,
    }
    x = rng.normal(size=(batch, n_in)).astype(dtype)
    y = np.eye(n_out, dtype=dtype)[rng.integers(0, n_out, batch)]
    return params, x, y


def _w1(x, y):
    return tnp.tanh(x * y + 0.5 * x) * 2 - y


def _layout(x, y):
    t = tnp.transpose(x, (2, 0, 1))
    return [
        t * 2.0,
        x[:, ::2, ::-1] + 1.0,
        x.reshape(4, 6).T,
        tnp.concatenate([x, x * 3.0], axis=1),
        tnp.pad(x, ((1, 0), (0, 2), (1, 1))),
        x + y,
        tnp.flip(x, 0) - x,
        tnp.sum(t, axis=0) * y[:3],
        tnp.arange(24).reshape(2, 3, 4) + x.astype(np.int64),
    ]


def _native_fallbacks(x, xi, i, ia, key):
    """take, take_along_axis, take_add, take_along_add, cumsum, threefry2x32 (gather.py)."""
    return [
        bind("take", x, i, axis=1),
        bind("take_along_axis", xi, ia, axis=0),
        bind("take_add", x, i, bind("take", x, i, axis=1), axis=1),
        bind("take_along_add", xi, ia, bind("take_along_axis", xi, ia, axis=0), axis=0),
        bind("take_add", x > 0, i, bind("take", x, i, axis=1) > 0, axis=1),
        bind("cumsum", x, axis=0),
        bind("cumsum", xi, axis=1),
        bind("threefry2x32", key, bind("convert", i, dtype=np.dtype(np.int32))),
    ]


NATIVE_ARGS = (
    lazy((3, 6)),
    np.zeros((3, 6), np.int64),
    np.zeros(5, np.int32),
    np.zeros((2, 6), np.int64),
    np.zeros(2, np.int64),
)


def corpus() -> dict[str, tuple]:
    """name -> (function, example args): every program whose kernels CI compiles."""
    progs: dict[str, tuple] = {}
    for dt in DTYPES:
        name = np.dtype(dt).name
        a = np.zeros((3, 5), dt)
        progs[f"unary_{name}"] = (_unary(dt), a)
        progs[f"binary_{name}"] = (_binary(dt), a, a)
        progs[f"convert_{name}"] = (_convert, a)
        progs[f"reductions_{name}"] = (_reductions, np.zeros((2, 3, 4), dt))
    x = lazy((64, 1024))
    progs["rowwise_f32"] = (_rowwise, x, lazy((1024,)), lazy((1024,)))
    progs["rowwise_f64_small"] = (_rowwise, *(lazy(s, np.float64) for s in [(5, 7), (7,), (7,)]))
    progs["rowwise_wide"] = (_rowwise, lazy((16, 20000)), lazy((20000,)), lazy((20000,)))
    progs["column_sums"] = (lambda a: (a.sum(axis=0), a.max(axis=0), a.argmin(axis=0)), x)
    progs["full_reduce"] = (lambda a: (a.sum(), a.max(), tnp.mean(a * a)), x)
    progs["gather"] = (_gather, lazy((6, 4)), np.zeros(5, np.int64))
    progs["native_fallbacks"] = (_native_fallbacks, *NATIVE_ARGS)
    progs["layout"] = (_layout, lazy((2, 3, 4)), lazy((4,)))
    progs["w1"] = (_w1, lazy((1 << 20,)), lazy((1 << 20,)))
    progs["w1_int64_index"] = (_w1, lazy((1 << 31,)), lazy((1 << 31,)))
    progs["mlp_step"] = (mlp_step, *mlp_args())
    return progs


@functools.cache
def corpus_sources() -> dict[str, str]:
    return {name: program(fun, *args).source for name, (fun, *args) in corpus().items()}


# ---------------------------------------------------------------- source text


def test_w1_is_one_vectorized_grid_stride_kernel():
    prog = program(_w1, lazy((1 << 20,)), lazy((1 << 20,)))
    assert [launch.name for launch in prog.launches] == ["k0_loop"]
    src = prog.source
    assert "u += stride" in src and "tj_vec<float, 4>" in src
    assert "tanhf(" in src and "const int stride" in src  # 32-bit indices at this size
    assert prog.launches[0].grid_stride and prog.launches[0].units == 1 << 20


def test_huge_arrays_switch_to_64_bit_indices():
    src = program(_w1, lazy((1 << 31,)), lazy((1 << 31,))).source
    assert "const int64_t stride" in src


def test_strided_access_has_no_vector_path():
    src = program(lambda a: a.T * 2.0, lazy((64, 32))).source
    assert "tj_vec<float" not in src.split("tj_arg_better")[1]


def test_softmax_is_one_row_kernel_reading_each_row_once():
    prog = program(lambda a: tj.nn.softmax(a, axis=-1), lazy((64, 1024)))
    assert [launch.name for launch in prog.launches] == ["k0_row"]
    body = prog.source.split('extern "C"')[1]
    assert "__shfl_xor_sync" in body
    assert body.count("b0[") == 1  # loaded once into registers, phases reuse them
    assert "c0[it]" in body


def test_wide_rows_are_reread_instead_of_cached():
    body = program(lambda a: tj.nn.softmax(a, axis=-1), lazy((4, 100000))).source
    body = body.split('extern "C"')[1]
    assert "c0[" not in body and body.count("b0[") >= 2


def test_column_reduction_coalesces_over_the_outer_index():
    prog = program(lambda a: a.sum(axis=0), lazy((4096, 4096)))
    body = prog.source.split('extern "C"')[1]
    assert "__shared__" in body and "__shfl_xor_sync" not in body
    assert "threadIdx.x % " in body.split("const int row")[1].split(";")[0]
    launch = prog.launches[0]
    assert launch.units * (launch.block // 8) >= 4096  # every column has a thread


def test_square_is_a_product_not_powf():
    # layernorm's variance, mean((x - mu) ** 2): libdevice powf costs ~40 instructions an
    # element and made layernorm 2x slower than softmax on an H200.
    src = program(lambda a: tnp.var(a, axis=-1), lazy((64, 1024))).source
    body = src.split('extern "C"')[1]
    assert "powf(" not in body and "pow(" not in body
    src = program(lambda a: a**3.0, lazy((64,))).source
    assert "powf(" in src.split('extern "C"')[1]


def test_row_kernel_drops_the_bounds_check_when_threads_tile_the_row():
    body = program(lambda a: tj.nn.softmax(a, axis=-1), lazy((64, 1024))).source
    assert "if (j < 1024)" not in body.split('extern "C"')[1]
    body = program(lambda a: tj.nn.softmax(a, axis=-1), lazy((64, 1000))).source
    assert "if (j < 1000)" in body.split('extern "C"')[1]


def test_argmax_uses_first_occurrence_helper():
    src = program(lambda a: tnp.argmax(a, axis=1), lazy((8, 100))).source
    assert "tj_arg_better<float>" in src


def test_matmul_and_fallbacks_emit_no_kernel():
    prog = program(lambda a, b: a @ b, lazy((8, 4)), lazy((4, 3)))
    assert prog.launches == []
    # NumPy raises on a gather from an empty axis: only the host step can raise.
    prog = program(lambda a, i: bind("take", a, i, axis=1), lazy((8, 0)), np.zeros(3, np.int64))
    assert prog.launches == []


def test_gathers_scatters_cumsum_and_threefry_get_kernels():
    prog = program(_native_fallbacks, *NATIVE_ARGS)
    kernels = [src for src in prog.source.split('extern "C"')[1:] if "tj_clamp_index(" in src]
    assert len(kernels) >= 5  # take, take_along_axis, take_add (float, bool), take_along_add
    src = prog.source
    assert "(uint64_t)*d + (uint64_t)upd[" in src  # int64 scatter-add wraps via unsigned
    assert "(*d || upd[" in src  # bool add is `or`
    assert "acc = acc + x[" in src and "tj_rotl32(x1, 13)" in src
    assert "atomic" not in src  # deterministic: each output column belongs to one thread


def test_every_test_program_generates_kernels():
    sources = corpus_sources()
    assert all(src.count("__global__") >= 1 for name, src in sources.items()), [
        name for name, src in sources.items() if "__global__" not in src
    ]


# ---------------------------------------------------------------- compiles (CI, no GPU)


def _nvcc(path: str) -> tuple[str, str]:
    cmd = [NVCC, "--cubin", "-arch=sm_90", *nvrtc.OPTIONS, "-w", "-o", path + ".cubin", path]
    res = subprocess.run(cmd, check=False, capture_output=True, text=True)
    return path, res.stderr if res.returncode else ""


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
def test_every_generated_kernel_compiles_with_nvcc():
    sources = corpus_sources()
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for name, src in sources.items():
            paths[name] = os.path.join(tmp, f"{name}.cu")
            with open(paths[name], "w") as f:
                f.write(src)
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            errors = {p: err for p, err in pool.map(_nvcc, paths.values()) if err}
    assert not errors, "\n".join(f"{p}:\n{e[:3000]}" for p, e in errors.items())
    kernels = sum(src.count("__global__") for src in sources.values())
    assert kernels >= 60  # every program above contributes its kernels


def _needs_nvrtc():
    try:
        nvrtc.nvrtc_module()
    except tj.errors.CompileError as err:  # no CuPy, or no NVRTC library
        pytest.skip(str(err))


def test_every_generated_kernel_compiles_with_nvrtc():
    _needs_nvrtc()
    failures = {}
    for name, src in corpus_sources().items():
        try:
            nvrtc.compile_source(src, "-arch=sm_90", ".cubin", f"{name}.cu")
        except tj.errors.CompileError as err:
            failures[name] = str(err)[:3000]
    assert not failures, "\n".join(f"{n}:\n{log}" for n, log in failures.items())


def test_kernels_compile_without_flush_to_zero_or_contraction():
    # Regression: CuPy's RawModule appends -ftz=true to every NVRTC compile, which flushed
    # float32 subnormals (0 / 1e-45 gave NaN on an H200) and lost the sign of zeros
    # (atan2(0, -0) gave 0). The backend compiles with its own options: no flushing
    # arithmetic (only libdevice's internal .approx steps, on operands it has range-reduced).
    _needs_nvrtc()
    for name in ("binary_float32", "unary_float32", "reductions_float32", "rowwise_f32"):
        ptx = nvrtc.compile_source(corpus_sources()[name], "-arch=compute_90", ".ptx").decode()
        assert "div.rn.f32" in ptx or name != "binary_float32"
        flushing = [ln for ln in ptx.splitlines() if ".ftz" in ln and ".approx." not in ln]
        assert not flushing, (name, flushing[:5])
    mad = 'extern "C" __global__ void k(float* a) { a[0] = a[0] * a[1] + a[2]; }'
    ptx = nvrtc.compile_source(mad, "-arch=compute_90", ".ptx").decode()
    assert "mul.rn.f32" in ptx and "fma" not in ptx  # -fmad=false: rounds as NumPy does


def test_nvrtc_targets_the_device_or_the_newest_older_architecture():
    assert nvrtc.target(90, (80, 90)) == ("-arch=sm_90", ".cubin")
    assert nvrtc.target(89, (80, 90)) == ("-arch=compute_80", ".ptx")
    with pytest.raises(tj.errors.CompileError, match="compute capability 70"):
        nvrtc.target(70, (80, 90))


def test_nvrtc_errors_carry_the_log():
    _needs_nvrtc()
    with pytest.raises(tj.errors.CompileError, match="(?s)NVRTC rejected.*undefined_thing"):
        nvrtc.compile_source("__global__ void k() { undefined_thing(); }", "-arch=sm_90")


# ---------------------------------------------------------------- without a GPU


@pytest.mark.skipif(GPU, reason="a GPU is present: the missing-GPU errors cannot happen")
def test_cuda_without_gpu_raises_device_error_naming_what_is_missing():
    with pytest.raises(DeviceError, match="CuPy|GPU"):
        tj.jit(lambda x: x + 1.0, device="cuda")(np.ones(3))
    with pytest.raises(DeviceError, match="CuPy|GPU"):
        tj.device_put(np.ones(3), "cuda")
    assert tj.jit(lambda x: x + 1.0)(np.ones(2)).tolist() == [2.0, 2.0]  # the CPU still works


class _FakeGpuArray:
    """Enough of a CuPy array for the signature: a __cuda_array_interface__, shape, dtype."""

    @property
    def __cuda_array_interface__(self) -> dict:
        return {"shape": (3,), "typestr": "<f4", "data": (0, False), "version": 3}

    shape = (3,)
    dtype = np.dtype(np.float32)


@pytest.mark.parametrize("device", ["cpu", "numpy"])
def test_gpu_array_on_a_host_device_is_an_explicit_error(device):
    f = tj.jit(lambda x: x * 2.0, device=device)
    with pytest.raises(DeviceError, match="device_get"):
        f(_FakeGpuArray())


# ---------------------------------------------------------------- on the GPU


def assert_close(got, want, loose: float = 1.0):
    """Equal to the reference; float tolerance covers CUDA's <= 2-ulp math and sum order."""
    got, want = tj.device_get(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.shape)
    if want.dtype.kind == "f":
        rtol, atol = (1e-5, 1e-6) if want.dtype == np.float32 else (1e-12, 1e-13)
        rtol, atol = rtol * loose, atol * loose
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def run_both(fun, *args, loose: float = 1.0):
    got = tj.tree_flatten(tj.jit(fun, device="cuda")(*args))[0]
    want = tj.tree_flatten(tj.jit(fun, device="numpy")(*args))[0]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_close(g, w, loose)
    return got


def gpu_values(dtype, shape):
    dt = np.dtype(dtype)
    if dt == np.bool_:
        elements = st.booleans()
    elif dt.kind == "i":
        info = np.iinfo(dt)
        elements = st.one_of(st.integers(-40, 40), st.sampled_from([0, -1, info.min, info.max]))
    else:
        width = 32 if dt == np.float32 else 64
        tiny = float(np.finfo(dt).smallest_subnormal)
        special = st.sampled_from([np.nan, np.inf, -np.inf, -0.0, 0.5, 1.5, 2.5, -2.5, tiny, -tiny])
        elements = st.one_of(st.floats(-30, 30, width=width), special)
    size = int(np.prod(shape))
    return st.lists(elements, min_size=size, max_size=size).map(
        lambda xs: np.array(xs, dtype=dt).reshape(shape)
    )


GPU_SHAPES = [(), (7,), (3, 5), (0, 4), (1031,)]


@functools.cache
def _fun(kind, dtype):
    return {"unary": _unary, "binary": _binary}[kind](dtype)


@needs_gpu
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@settings(max_examples=10)
@given(data=st.data())
def test_gpu_every_elementwise_primitive_matches_the_reference(dtype, data):
    shape = data.draw(st.sampled_from(GPU_SHAPES))
    x = data.draw(gpu_values(dtype, shape))
    y = data.draw(gpu_values(dtype, shape))
    with np.errstate(all="ignore"):
        run_both(_fun("unary", dtype), x)
        run_both(_fun("binary", dtype), x, y)
        if np.dtype(dtype).kind == "f":
            x = np.where(np.abs(x) < 2e9, x, 0).astype(dtype)
        run_both(_convert, x)


@needs_gpu
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@settings(max_examples=8)
@given(data=st.data())
def test_gpu_reductions_match_the_reference(dtype, data):
    x = data.draw(gpu_values(dtype, (2, 3, 4)))
    if np.dtype(dtype).kind == "i":
        x = np.clip(x, -3, 3).astype(dtype)
    with np.errstate(all="ignore"):
        run_both(_reductions, x)


def assert_bits_equal(got, want):
    """Equal values, signs of zero and subnormals included (no tolerance)."""
    got, want = tj.device_get(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    numbers = ~np.isnan(want)  # a NaN's sign bit is not specified (x86 sets it, CUDA not)
    np.testing.assert_array_equal(np.signbit(got[numbers]), np.signbit(want[numbers]))


def _ieee_exact(a, b):
    """Correctly rounded ops (NumPy's results bit for bit) and reductions over subnormals."""
    return (a / b, a * b, a + b, a - b, a * b + a, tnp.sqrt(tnp.abs(a)), tnp.arctan2(a * 0, b))


@needs_gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_gpu_keeps_subnormals_and_signed_zeros(dtype):
    # Regression (H200): kernels compiled with flush-to-zero gave 0 / 1e-45 = nan,
    # argmax([0, 1e-45]) = 0 and prod([1e-45, inf]) = nan; 0-d inputs copied by cupy.asarray
    # (a memset for any value == 0) lost the sign of -0.0: 1 / -0 = inf, atan2(0, -0) = 0.
    tiny = np.finfo(dtype).smallest_subnormal
    x = np.array([1.0, 0.0, -0.0, 0.0, tiny, -tiny, 3 * tiny, 1e-30, 2.0], dtype)
    y = np.array([-0.0, -0.0, -0.0, tiny, 2.0, 0.5, tiny, 1e-10, -0.0], dtype)
    f = tj.jit(_ieee_exact, device="cuda")
    with np.errstate(all="ignore"):
        for xs, ys in [(x, y), *zip(x, y)]:  # whole arrays, then every pair as 0-d arrays
            xs, ys = np.asarray(xs), np.asarray(ys)
            for got, want in zip(f(xs, ys), _ieee_exact(xs, ys)):
                assert_bits_equal(got, np.asarray(want, dtype))
    r = np.array([[0.0, tiny, 0.0], [tiny, np.inf, 2.0], [-tiny, -0.0, -tiny]], dtype)
    reds = tj.jit(lambda a: (a.argmax(axis=1), a.max(axis=1), a.prod(axis=1), a.sum(axis=1),
                             a.argmin(axis=0), a.min(axis=0)), device="cuda")  # fmt: skip
    want = (r.argmax(1), r.max(1), r.prod(1), r.sum(1), r.argmin(0), r.min(0))
    for got, w in zip(reds(r), want):
        assert_bits_equal(got, w)


@needs_gpu
@pytest.mark.parametrize(
    "shape", [(64, 1024), (5, 7), (3, 20000), (1, 1), (300, 33), (0, 5)], ids=str
)
def test_gpu_rowwise_kernels_match_the_reference(shape):
    rng = np.random.default_rng(1)
    x = (rng.normal(size=shape) * 3).astype(np.float32)
    g = rng.normal(size=shape[-1:]).astype(np.float32)
    b = rng.normal(size=shape[-1:]).astype(np.float32)
    if shape[0] == 0:
        x = np.zeros(shape, np.float32)
    run_both(_rowwise_last, x, g, b, loose=10.0)
    if x.size:
        run_both(lambda a: (tnp.argmax(a, axis=-1), tj.nn.softmax(a, axis=0)), x, loose=10.0)


@needs_gpu
@pytest.mark.parametrize("shape", [(4096, 300), (33, 70), (100000,)], ids=str)
def test_gpu_column_and_full_reductions_match_numpy(shape):
    x = np.random.default_rng(2).normal(size=shape)
    axis = 0
    got = tj.jit(lambda a: (a.sum(axis=axis), a.max(axis=axis), tnp.argmin(a, axis=axis)),
                 device="cuda")(x)  # fmt: skip
    np.testing.assert_allclose(tj.device_get(got[0]), x.sum(axis=0), rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(tj.device_get(got[1]), x.max(axis=0))
    np.testing.assert_array_equal(tj.device_get(got[2]), x.argmin(axis=0))


@needs_gpu
def test_gpu_layout_gather_and_matmul_match_the_reference():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(2, 3, 4)), rng.normal(size=(4,))
    run_both(_layout, x, y)
    run_both(_gather, rng.normal(size=(6, 4)), np.array([0, 3, -1, 2, 2]))
    for dt in (np.float32, np.float64, np.int32, np.int64):
        a = rng.integers(-5, 5, (2, 3, 4)).astype(dt)
        b = rng.integers(-5, 5, (2, 4, 5)).astype(dt)
        run_both(lambda p, q: (p @ q, p.mT @ p, (p @ q).sum(axis=-1)), a, b)


@needs_gpu
def test_gpu_w1_on_misaligned_and_odd_sizes():
    import cupy

    rng = np.random.default_rng(4)
    for n in (1, 5, 4099, 1 << 20):
        x = rng.normal(size=n + 1).astype(np.float32)
        y = rng.normal(size=n + 1).astype(np.float32)
        run_both(_w1, x[:n], y[:n])
        xd, yd = cupy.asarray(x)[1:], cupy.asarray(y)[1:]  # 4-byte offset: the scalar path
        got = tj.jit(_w1, device="cuda")(xd, yd)
        np.testing.assert_allclose(got.get(), _w1(x[1:], y[1:]), rtol=1e-5, atol=1e-6)


@needs_gpu
def test_gpu_mlp_step_matches_the_reference_in_float64():
    args = mlp_args(batch=64, n_in=20, hidden=32, n_out=10, dtype=np.float64)
    run_both(mlp_step, *args, loose=1000.0)


@needs_gpu
def test_gpu_cupy_inputs_stay_on_device_and_outputs_are_cupy():
    import cupy

    x = cupy.arange(12, dtype=cupy.float32).reshape(3, 4)
    f = tj.jit(lambda a, s: a * s + 1.0, device="cuda")
    out = f(x, 2.0)
    assert isinstance(out, cupy.ndarray)
    np.testing.assert_array_equal(out.get(), np.arange(12, dtype=np.float32).reshape(3, 4) * 2 + 1)
    out2 = f(np.ones((3, 4), np.float32), 2.0)  # NumPy in: copied to the device, CuPy out
    assert isinstance(out2, cupy.ndarray)
    assert f.lower(x, 2.0).compile().kernels()
    with pytest.raises(DeviceError, match="device_get"):
        tj.jit(lambda a: a + 1.0)(x)


@needs_gpu
def test_gpu_device_put_get_roundtrip_and_grad():
    import cupy

    for z in (np.float32(-0.0), np.array(-0.0), np.array([-0.0, 5e-324])):
        back = tj.device_get(tj.device_put(z, "cuda"))
        np.testing.assert_array_equal(np.signbit(back), np.signbit(z))
        np.testing.assert_array_equal(back, z)

    x = tj.device_put(np.linspace(-1, 1, 9), "cuda")
    assert isinstance(x, cupy.ndarray)
    g = tj.jit(tj.grad(lambda a: tnp.sum(tnp.tanh(a) ** 2)), device="cuda")(x)
    xs = np.linspace(-1, 1, 9)
    want = 2 * np.tanh(xs) * (1 - np.tanh(xs) ** 2)
    np.testing.assert_allclose(tj.device_get(g), want, rtol=1e-12)


def _index_cases(n: int, shape: tuple, rng) -> np.ndarray:
    """Indices in range, negative, and far out of range both ways (the prims clamp)."""
    pool = np.array([-(10**6), -2 * n - 3, -n - 1, -n, -1, 0, n - 1, n, 10**6])
    return rng.choice(pool, shape)


# 1-D, a middle axis, many rows over few columns (each case compiles 5 programs per dtype;
# the edge test adds a long last axis).
NATIVE_CASES = [((7,), 0), ((4, 3, 2), 1), ((1031, 3), 0)]


@needs_gpu
@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.int64, np.float32, np.float64])
def test_gpu_native_fallbacks_match_numpy_bit_for_bit(dtype):
    rng = np.random.default_rng(7)
    for shape, axis in NATIVE_CASES:
        n = shape[axis]
        x = gpu_example(dtype, shape, rng)
        idx = _index_cases(n, (6,), rng).astype(np.int32)
        along = _index_cases(n, shape[:axis] + (5,) + shape[axis + 1 :], rng)
        upd = gpu_example(dtype, shape[:axis] + (6,) + shape[axis + 1 :], rng)
        upd_along = gpu_example(dtype, along.shape, rng)
        for fun, *args in _native_cases(axis, x, idx, along, upd, upd_along):
            assert_native_bit_exact(fun, *args)


def _native_cases(axis, x, idx, along, upd, upd_along) -> list[tuple]:
    return [
        (lambda x, i: bind("take", x, i, axis=axis), x, idx),
        (lambda x, i: bind("take_along_axis", x, i, axis=axis), x, along),
        (lambda x, i, u: bind("take_add", x, i, u, axis=axis), x, idx, upd),
        (lambda x, i, u: bind("take_along_add", x, i, u, axis=axis), x, along, upd_along),
        (lambda x: bind("cumsum", x, axis=axis), x),
    ]


@needs_gpu
def test_gpu_native_fallbacks_edge_shapes_and_threefry():
    rng = np.random.default_rng(8)
    f32 = np.float32
    x = rng.standard_normal((3, 2000)).astype(f32) * 1e4
    idx = rng.integers(-5, 5, 50000)
    upd = rng.standard_normal((3, 50000)).astype(f32)  # long index runs: NumPy's add order
    assert_native_bit_exact(lambda x, i, u: bind("take_add", x, i, u, axis=1), x, idx, upd)
    assert_native_bit_exact(lambda x: bind("cumsum", x, axis=1), x)
    empty_idx = np.zeros(0, np.int64)
    assert_native_bit_exact(lambda x, i: bind("take", x, i, axis=0), x, empty_idx)
    assert_native_bit_exact(lambda x: bind("cumsum", x, axis=0), np.zeros((0, 3), f32))
    upd0 = np.zeros((3, 0), f32)  # no updates: the scatter still copies x
    assert_native_bit_exact(lambda x, i, u: bind("take_add", x, i, u, axis=1), x, empty_idx, upd0)
    for key in ([0, 0], [-(2**31), 2**31 - 1], [123, -7]):
        for n in (0, 1, 6, 7, 1031):
            counts = (np.arange(n) * 7919 - 3).astype(np.int32)
            assert_native_bit_exact(lambda k, c: bind("threefry2x32", k, c), np.array(key), counts)
    assert_native_bit_exact(lambda k: tj.random.uniform(k, (5, 7)), tj.random.key(42))
    with pytest.raises(IndexError):  # an empty axis with indices stays a raising host step
        tj.jit(lambda x, i: bind("take", x, i, axis=1), device="cuda")(
            np.zeros((2, 0), f32), np.array([0, 1])
        )


def gpu_example(dtype, shape, rng) -> np.ndarray:
    """Values with NaNs, infinities, signed zeros and integer extremes mixed in."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind == "i":
        info = np.iinfo(dt)
        pool = np.array([info.min, info.max, -1, 0, 1], dt)
        out = rng.integers(-50, 50, shape).astype(dt)
    else:
        pool = np.array([np.nan, np.inf, -np.inf, -0.0, 1e30, 1e-7], dt)
        out = (rng.standard_normal(shape) * 100).astype(dt)
    mask = rng.random(shape) < 0.2
    return np.where(mask, rng.choice(pool, shape), out).astype(dt)


def assert_native_bit_exact(fun, *args):
    """device="cuda" equals device="numpy" byte for byte (NaN sign bits aside), no host step."""
    jitted = tj.jit(fun, device="cuda")
    got = np.asarray(tj.device_get(jitted(*args)))
    want = np.asarray(tj.jit(fun, device="numpy")(*args))
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    if got.dtype.kind == "f":  # NaN's sign bit is not specified
        got, want = np.where(np.isnan(got), np.nan, got), np.where(np.isnan(want), np.nan, want)
    assert got.tobytes() == want.tobytes(), (fun, got, want)
    assert jitted.lower(*args).compile().executable.fallbacks() == []
