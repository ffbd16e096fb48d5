"""NVRTC: CUDA source -> cubin with IEEE float semantics, cached on disk by tracejit's cache.

Why not `cupy.RawModule(code=...)`: CuPy appends `-ftz=true` to every NVRTC compile it does
(cupy/cuda/compiler.py, `_compile_with_cache_cuda`), and with NVRTC the last of repeated
options wins, so a caller cannot turn it off. Flush-to-zero turns float32 subnormals into
zeros (0 / 1e-45 gives NaN, argmax misses a subnormal maximum, 1e-45 * inf gives NaN) and
the flushing math-library paths lose the sign of zero (atan2(0, -0) gives 0), where NumPy
follows IEEE 754. So tracejit compiles with NVRTC itself, with the options below, and loads
the binary with `cupy.RawModule(path=...)`, which compiles nothing.

OPTIONS: IEEE 754 float semantics, as NumPy on the host:
  -ftz=false        keep subnormals (and the sign of zeros through libdevice's paths);
  -prec-div=true    correctly rounded float32 division (NVRTC's default, stated);
  -prec-sqrt=true   correctly rounded float32 sqrt (NVRTC's default, stated);
  -fmad=false       no contraction of a * b + c into one fma: every + and * rounds as NumPy's
                    does, so elementwise results are bit-identical where the operation is
                    correctly rounded (the kernels are memory-bound: the extra instruction
                    costs no time). libdevice's functions call fma explicitly, unaffected.
                    `tj.config.fp_contract = True` compiles with -fmad=true instead.

>>> "-ftz=false" in OPTIONS and "-fmad=false" in OPTIONS
True
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from tracejit.errors import CompileError

OPTIONS = ("--std=c++17", "-ftz=false", "-prec-div=true", "-prec-sqrt=true", "-fmad=false")


def options() -> tuple[str, ...]:
    """OPTIONS, with -fmad=true where the user opted into contraction (`tj.config.fp_contract`)."""
    from tracejit.config import config

    if not config.fp_contract:
        return OPTIONS
    return tuple("-fmad=true" if o == "-fmad=false" else o for o in OPTIONS)


def nvrtc_module():
    """CuPy's NVRTC bindings (CompileError when CuPy or the NVRTC library is missing)."""
    try:
        from cupy.cuda import nvrtc

        nvrtc.getVersion()
    except (ImportError, OSError, RuntimeError) as err:
        raise CompileError(
            f"NVRTC is not loadable ({err.__class__.__name__}: {err}); install CuPy for your "
            "CUDA version (pip install cupy-cuda12x or cupy-cuda13x)"
        ) from None
    return nvrtc


def target(compute_capability: int, supported: tuple[int, ...]) -> tuple[str, str]:
    """(the -arch option, ".cubin" or ".ptx") for a device of `compute_capability`.

    A cubin for the device itself when this NVRTC knows it (no driver JIT, and no PTX newer
    than the driver); otherwise PTX for the newest architecture NVRTC knows below it, which
    the driver compiles at load time.

    >>> target(90, (75, 80, 90, 100))
    ('-arch=sm_90', '.cubin')
    >>> target(120, (75, 80, 90, 100))
    ('-arch=compute_100', '.ptx')
    """
    if compute_capability in supported:
        return f"-arch=sm_{compute_capability}", ".cubin"
    older = [a for a in supported if a <= compute_capability]
    if not older:
        raise CompileError(
            f"this NVRTC supports architectures {sorted(supported)}, none at or below the "
            f"GPU's compute capability {compute_capability}; install an older CUDA toolkit "
            "(CuPy for that CUDA version)"
        )
    return f"-arch=compute_{max(older)}", ".ptx"


def compile_source(source: str, arch: str, suffix: str = ".cubin", name: str = "tracejit.cu"):
    """The cubin (or PTX, by `suffix`) of `source` compiled with OPTIONS and `arch`.

    Raises CompileError with NVRTC's log when it rejects the source. Needs no GPU.

    >>> ptx = compile_source('extern "C" __global__ void k(float* a) { a[0] /= a[1]; }',
    ...                      "-arch=compute_90", ".ptx")  # doctest: +SKIP
    >>> b"div.rn.f32" in ptx and b".ftz" not in ptx  # doctest: +SKIP
    True
    """
    nvrtc = nvrtc_module()
    prog = nvrtc.createProgram(source, name, [], [])
    try:
        try:
            nvrtc.compileProgram(prog, [*options(), arch])
        except nvrtc.NVRTCError:
            log = nvrtc.getProgramLog(prog)
            raise CompileError(
                f"NVRTC rejected the generated CUDA source:\n{log[:4000]}\nThis is a tracejit "
                "bug: please report it with the source (jitted.lower(...).compile().source())"
            ) from None
        binary = nvrtc.getCUBIN(prog) if suffix == ".cubin" else nvrtc.getPTX(prog)
    finally:
        nvrtc.destroyProgram(prog)
    return bytes(binary)


@functools.cache
def _device_target(compute_capability: int) -> tuple[str, str]:
    nvrtc = nvrtc_module()
    supported = tuple(nvrtc.getSupportedArchs())
    return target(compute_capability, supported)


def binary_path(source: str, compute_capability: int) -> str:
    """Path of the compiled binary of `source` for the device, from tracejit's disk cache.

    The key holds everything the binary depends on: the source, OPTIONS, the target and the
    NVRTC version (so a CUDA upgrade recompiles).
    """
    from tracejit import cache

    arch, suffix = _device_target(compute_capability)
    parts = {
        "backend": "cuda",
        "source_sha256": hashlib.sha256(source.encode()).hexdigest(),
        "options": list(options()),
        "arch": arch,
        "nvrtc": list(nvrtc_module().getVersion()),
    }

    def build(_source_path: str, binary_path: str) -> None:
        Path(binary_path).write_bytes(compile_source(source, arch, suffix))

    return cache.get_or_build(parts, source, build, suffix=suffix)


__all__ = ["OPTIONS", "binary_path", "compile_source", "nvrtc_module", "target"]
