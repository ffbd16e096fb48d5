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

import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from _cuda_programs import (
    NATIVE_ARGS,
    NVCC,
    _native_fallbacks,
    _w1,
    corpus_sources,
    lazy,
    program,
)

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.backend_cuda import nvrtc
from tracejit.errors import DeviceError
from tracejit.tracer.core import bind

# ---------------------------------------------------------------- source text


def test_w1_is_one_vectorized_grid_stride_kernel():
    prog = program(_w1, lazy((1 << 20,)), lazy((1 << 20,)))
    assert [launch.name for launch in prog.launches] == ["k0_loop"]
    src = prog.source
    assert "u += stride" in src and "tj_vec<float, 4>" in src
    assert "tanhf(" in src and "const int stride" in src  # 32-bit indices at this size
    assert prog.launches[0].grid_stride and prog.launches[0].units == 1 << 20


def test_read_only_inputs_are_restrict_unless_a_call_writes_an_output_over_them():
    from tracejit.backend_cuda.codegen import generate
    from tracejit.ir.fusion import fuse
    from tracejit.ir.memory import plan_memory

    x = np.ones(64)
    schedule = plan_memory(fuse(tj.make_ir(lambda p, g: p - 0.1 * g)(x, x)))
    (p, g), (out,) = schedule.inputs, schedule.outputs
    plain = generate(schedule).source  # no donation: outputs are fresh arrays
    assert f"const double* __restrict__ b{p}," in plain
    assert f"const double* __restrict__ b{g}," in plain
    donating = generate(schedule, donated=frozenset({(p, out)})).source  # p's memory -> out
    assert f"const double* b{p}," in donating
    assert f"const double* __restrict__ b{g}," in donating


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
    # NumPy's add (ir/cwriter/library.py): integers wrap via unsigned, bools are `or`
    assert "*d = tj_wrap_add(*d, upd[" in src
    # cumsum: a tiled scan of the contiguous axis 1, a register-chunked one of axis 0
    assert "acc = tj_wrap_add(acc, line[k]);" in src and "acc = tj_wrap_add(acc, v[j]);" in src
    assert "tj_threefry_pair(key, counts, out, u, " in src
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
    if getattr(sys.modules.get("cupy"), "EMULATED", False):
        pytest.skip("the CUDA emulator's NVRTC is g++: there is no PTX to inspect")
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


def test_cuda_without_gpu_raises_device_error_naming_what_is_missing(without_cupy):
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


@pytest.mark.parametrize(
    "fun, shape, layout",
    [
        (lambda a: tnp.sum(tnp.flip(a, 1), axis=0), (64, 256), "column"),  # kept axis reversed
        (lambda a: tnp.sum(a[:, ::-1] * a.T, axis=1), (64, 64), "row"),  # one of each: a tie
        (lambda a: tnp.sum(a, axis=0), (64, 256), "column"),
    ],
)
def test_reduction_layout_is_the_same_on_both_backends(fun, shape, layout):
    # one heuristic (ir/cwriter/layout.py): a reversed view (stride -1) reads memory in order
    from tracejit.backend_cpu import schedule_graph
    from tracejit.backend_cpu.columns import is_column
    from tracejit.backend_cuda.reduce import _layout
    from tracejit.ir import kernel as K
    from tracejit.ir.kernel_simplify import simplify

    schedule = schedule_graph(tj.jit(fun).lower(lazy(shape)).graph)
    (k,) = [s for s in schedule.steps if isinstance(s, K.Kernel) and s.reductions]
    assert _layout(simplify(k))[0] == layout
    assert is_column(k) == (layout == "column")
