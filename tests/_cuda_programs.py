"""The CUDA test programs shared by the source/compile tests and the GPU tests."""

from __future__ import annotations

import functools
import shutil

import numpy as np
import pytest
from _prims import elementwise_names

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax
from tracejit.backend_cuda import cuda_source
from tracejit.devices import cuda_available
from tracejit.ir import dtypes
from tracejit.ir.regions import nested_graphs
from tracejit.tracer.core import bind

DTYPES = [np.bool_, np.int32, np.int64, np.float32, np.float64]
# Compiled as one program each (every op at once: fewer nvcc runs): the 16-bit floats are
# computed in float32 inside kernels, uint16 wraps through uint32 (int8 and uint8 differ from
# it and int32 only in their typedef; complex128 from complex64 only in its part type, so those
# run in the emulated tests, not here).
NARROW_DTYPES = [np.uint16, np.float16, dtypes.BFLOAT16]
NVCC = shutil.which("nvcc")
GPU = cuda_available()
needs_gpu = pytest.mark.skipif(not GPU, reason="needs CuPy and a CUDA GPU (none found)")


def program(fun, *args):
    """The CUDA program generated for `fun` at `args` (after the optimization passes)."""
    return cuda_source(tj.jit(fun).lower(*args).graph)


def lazy(shape, dtype=np.float32):
    """An array of `shape` that occupies no memory: tracing only reads shape and dtype."""
    return np.broadcast_to(np.zeros((), dtype), shape)


# ---------------------------------------------------------------- the test programs


def _unary(dtype):
    names = elementwise_names(1, dtypes.category(dtype))
    return lambda x: [bind(n, x) for n in names]


def _binary(dtype):
    names = elementwise_names(2, dtypes.category(dtype))
    return lambda x, y: [bind(n, x, y) for n in names]


def _convert(x):
    return [bind("convert", x, dtype=np.dtype(d)) for d in DTYPES + NARROW_DTYPES] + [
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


def _few_unary(x):
    """Unary ops of the narrow dtypes: every float function renders the same way around its
    float32 call (a compile of all of them in float16 took nvcc 7 s), so a few stand in."""
    names = ("neg", "abs", "sign", "exp", "sqrt", "floor", "isnan", "not")
    return [bind(n, x) for n in names if n in elementwise_names(1, dtypes.category(x.dtype))]


def _one_reduction_each(x):
    """The narrow dtypes' reductions: one axis each (the axis handling is the wide dtypes')."""
    prims = ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod")
    return [bind(p, x, axes=(1,)) for p in prims] + [bind("argmax", x, axis=2)]


def _complex_ops(z, w):
    """Every op compiled code computes on complex values (sums and matmuls on real parts)."""
    return [
        *_unary(z.dtype)(z),
        *_binary(z.dtype)(z, w),
        *_convert(z),
        bind("real", z),
        bind("imag", z),
        bind("conj", z),
        bind("complex", bind("imag", z), bind("real", w)),
        tnp.sum(z, axis=0),
        tnp.cumprod(z, axis=1),
        z @ w.T,
        tnp.abs(z),
        tnp.exp(z),
    ]


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


def _empty_rows(x):
    """Two-phase row reductions over rows of length 0 (their results are not empty)."""
    return tnp.var(x, axis=-1), tj.nn.logsumexp(x, axis=-1), tnp.std(x, axis=-1, ddof=1)


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
    """take, take_along_axis, take_add, take_along_add, cumsum, cumprod, threefry2x32."""
    return [
        bind("take", x, i, axis=1),
        bind("take_along_axis", xi, ia, axis=0),
        bind("take_add", x, i, bind("take", x, i, axis=1), axis=1),
        bind("take_along_add", xi, ia, bind("take_along_axis", xi, ia, axis=0), axis=0),
        bind("take_add", x > 0, i, bind("take", x, i, axis=1) > 0, axis=1),
        bind("cumsum", x, axis=0),
        bind("cumsum", xi, axis=1),
        bind("cumprod", x, axis=1),
        bind("cumprod", xi, axis=0),
        bind("threefry2x32", key, bind("convert", i, dtype=np.dtype(np.int32))),
    ]


def _scans(a, z, b, s):
    """The scan kernels' forms (backend_cuda/scan.py): tiles of long rows with a ragged last
    chunk and tile, short rows, one long row, strided axes; 1- to 16-byte elements."""
    return [
        tnp.cumsum(a, axis=1),
        tnp.cumprod(a, axis=0),
        tnp.cumsum(a.astype(np.uint8), axis=-1),
        tnp.cumprod(z, axis=1),
        tnp.cumsum(z, axis=0),
        tnp.cumprod(b, axis=1, dtype=bool),
        tnp.cumsum(b, axis=0),
        tnp.nancumsum(s, axis=1),
    ]


SCAN_ARGS = (
    lazy((4097, 1000)),
    lazy((33, 7), np.complex128),
    lazy((70, 130), np.bool_),
    lazy((1, 5000), np.float64),
)


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
    for dt in NARROW_DTYPES:
        a, b = np.zeros((3, 5), dt), np.zeros((2, 3, 4), dt)
        fns = (_few_unary, _binary(dt), _convert, _one_reduction_each)
        progs[f"all_ops_{np.dtype(dt).name}"] = (
            lambda a, b, fns=fns: [f(*args) for f, args in zip(fns, [(a,), (a, a), (a,), (b,)])],
            a,
            b,
        )
    z = np.zeros((3, 5), np.complex64)
    progs["all_ops_complex64"] = (_complex_ops, z, z)
    x = lazy((64, 1024))
    progs["rowwise_f32"] = (_rowwise, x, lazy((1024,)), lazy((1024,)))
    progs["rowwise_f64_small"] = (_rowwise, *(lazy(s, np.float64) for s in [(5, 7), (7,), (7,)]))
    # empty rows: no register cache (NVRTC rejects an array of size 0; the fuzzer on an H200)
    progs["rowwise_empty_rows"] = (_empty_rows, lazy((5, 0), np.float64))
    progs["rowwise_wide"] = (_rowwise, lazy((16, 20000)), lazy((20000,)), lazy((20000,)))
    progs["column_sums"] = (lambda a: (a.sum(axis=0), a.max(axis=0), a.argmin(axis=0)), x)
    progs["full_reduce"] = (lambda a: (a.sum(), a.max(), tnp.mean(a * a)), x)
    progs["gather"] = (_gather, lazy((6, 4)), np.zeros(5, np.int64))
    progs["native_fallbacks"] = (_native_fallbacks, *NATIVE_ARGS)
    progs["scans"] = (_scans, *SCAN_ARGS)
    progs["layout"] = (_layout, lazy((2, 3, 4)), lazy((4,)))
    progs["w1"] = (_w1, lazy((1 << 20,)), lazy((1 << 20,)))
    progs["w1_int64_index"] = (_w1, lazy((1 << 31,)), lazy((1 << 31,)))
    progs["mlp_step"] = (mlp_step, *mlp_args())
    progs["lax_loops"] = (_lax_loops, lazy((6, 3)), np.int64(3), np.bool_(True))
    # the samplers' portable math: bit casts of every width, float32 and float64 series
    progs["samplers"] = (_samplers, tj.random.key(0))
    return progs


def _samplers(key):
    r = tj.random
    f16, f64 = r.normal(key, (8,), np.float16), r.normal(key, (8,), np.float64)
    casts = [lax.bitcast_convert_type(f16, np.int16), lax.bitcast_convert_type(f64, np.uint64),
             lax.bitcast_convert_type(lax.bitcast_convert_type(f64, np.int64), np.float64)]  # fmt: skip
    return (r.normal(key, (8,)), r.gumbel(key, (8,)), r.truncated_normal(key, -1.0, 2.0, (8,)),
            r.gamma(key, 2.5, (8,)), r.multivariate_normal(key, np.zeros(3), np.eye(3), (2,)),
            *casts)  # fmt: skip


def _lax_loops(xs, n, p):
    """scan (and its gradient's reverse scan), while_loop, cond: each body its own program."""

    def loss(w):
        h, ys = lax.scan(lambda h, x: (tnp.tanh(h * w + x), tnp.sum(h)), tnp.zeros(3), xs)
        return tnp.sum(lax.cond(p, lambda v: v * v, lambda v: -v, h)) + tnp.sum(ys)

    k = lax.while_loop(lambda s: s[0] < n, lambda s: (s[0] + 1, s[1] * 0.5), (0, xs[0]))
    return tj.grad(loss)(xs[0]), k[1]


@functools.cache
def corpus_sources() -> dict[str, str]:
    """Each program's CUDA source, and one per loop or branch body (`name_regionK`)."""
    sources = {}
    for name, (fun, *args) in corpus().items():
        graph = tj.jit(fun).lower(*args).graph
        sources[name] = cuda_source(graph).source
        for k, region in enumerate(nested_graphs(graph)):
            sources[f"{name}_region{k}"] = cuda_source(region).source
    return sources
