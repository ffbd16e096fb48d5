"""The C++ compiler driver: find a compiler, build a shared library, report failures.

The compiler is `$CXX` if set, else the first of `c++`, `g++`, `clang++` on PATH. Flags:
-O3 -march=native for vector code; -fopenmp-simd for `omp simd` (threads come from the
runtime's pool, cpp/pool.h, not from an OpenMP runtime); -fno-math-errno so
libm calls can vectorize; -fwrapv so signed overflow wraps as in NumPy; -ffp-contract=off so
every + and * rounds as NumPy's do (GCC's default `fast` fuses `x*2 - y` into one fma, which
does not overflow where NumPy does); `tj.config.fp_contract = True` opts into contraction.
The inline float32 exp/tanh write their FMAs out (`__builtin_fmaf`), so they keep them. glibc's libmvec
(-lmvec) provides the vector math functions; it is linked when the compiler finds it.

What we learn about a compiler by running it (its `--version` identity, ~10 ms; whether it
links -lmvec, a ~40 ms probe compile) is stored in `<cache_dir>/toolchain/`, keyed by the
`$CXX` text, the resolved binary's path, size and mtime, and the flags: a fresh process with
a warm cache runs no compiler at all (the first call of a cached function then costs ~0.1 s
less). Updating the compiler changes its mtime, so the entry is re-probed.

>>> find_compiler() is not None
True
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import subprocess
import tempfile

from tracejit import timing
from tracejit.cache.toolchain import remembered
from tracejit.config import config
from tracejit.errors import CompileError

FLAGS = (
    "-std=c++17",
    "-O3",
    "-march=native",
    "-fopenmp-simd",
    "-fno-math-errno",
    "-fwrapv",
    "-fPIC",
    "-shared",
)
CANDIDATES = ("c++", "g++", "clang++")


def find_compiler() -> str:
    """The compiler command to use, or CompileError saying how to get one."""
    env = os.environ.get("CXX", "").strip()
    if env:
        return env
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    raise CompileError(
        "no C++ compiler found for device='cpu' (looked at $CXX, then c++, g++, clang++ on "
        "PATH); install one (e.g. `apt install g++`) or use device='numpy'"
    )


@functools.cache
def identity(cxx: str) -> str:
    """The compiler's identity for cache keys (`tracejit.cache.compiler_identity`), stored on
    disk per compiler binary so that a warm process does not run `cxx --version`."""
    from tracejit import cache

    return remembered(cxx, FLAGS, "identity", lambda: cache.compiler_identity(cxx), _is_text)


@functools.cache
def extra_libs(cxx: str) -> tuple[str, ...]:
    """-lmvec where the toolchain has libmvec (glibc), else nothing (scalar libm calls)."""
    libs = remembered(cxx, FLAGS, "extra_libs", lambda: list(_probe_libs(cxx)), _is_libs)
    return tuple(libs)


def _is_text(value) -> bool:
    return isinstance(value, str) and bool(value)


def _is_libs(value) -> bool:
    return isinstance(value, list) and set(value) <= {"-lmvec"}


def _probe_libs(cxx: str) -> tuple[str, ...]:
    with tempfile.TemporaryDirectory(prefix="tracejit-probe-") as tmp:
        src = os.path.join(tmp, "probe.cpp")
        with open(src, "w") as f:
            f.write('extern "C" int tj_probe() { return 0; }\n')
        cmd = [*shlex.split(cxx), *FLAGS, src, "-o", os.path.join(tmp, "probe.so"), "-lmvec"]
        try:
            ok = subprocess.run(cmd, capture_output=True, check=False).returncode == 0
        except OSError:
            ok = False
    return ("-lmvec",) if ok else ()


def contract_flag() -> str:
    """GCC/Clang's floating-point contraction option for `tj.config.fp_contract`."""
    return "-ffp-contract=fast" if config.fp_contract else "-ffp-contract=off"


def command(cxx: str, source: str, library: str) -> list[str]:
    libs = extra_libs(cxx)
    # TJ_MVEC: libmvec links, so backend_cpu/vector_math.py's wrappers may call it
    flags = [*FLAGS, contract_flag(), *(["-DTJ_MVEC"] if "-lmvec" in libs else [])]
    return [*shlex.split(cxx), *flags, source, "-o", library, *libs]


def compile_library(cxx: str, source: str, library: str) -> None:
    """Compile `source` into the shared library `library`, or raise CompileError.

    On failure the source is copied to a directory that is kept, and the error names it.
    """
    cmd = command(cxx, source, library)
    try:
        with timing.phase("c++"):
            result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise CompileError(
            f"could not run the C++ compiler {cxx!r}: {exc}; set CXX to a working compiler "
            "or use device='numpy'"
        ) from exc
    if result.returncode != 0:
        kept = os.path.join(tempfile.mkdtemp(prefix="tracejit-failed-"), "source.cpp")
        shutil.copyfile(source, kept)
        raise CompileError(
            f"C++ compilation failed (exit code {result.returncode}); the source is kept at "
            f"{kept}\ncommand: {shlex.join(cmd)}\n{result.stderr.strip()}"
        )


__all__ = ["FLAGS", "command", "compile_library", "extra_libs", "find_compiler", "identity"]
