"""The C++ compiler driver: find a compiler, build a shared library, report failures.

The compiler is `$CXX` if set, else the first of `c++`, `g++`, `clang++` on PATH. Flags:
-O3 -march=native for vector code; -fopenmp for threads and `omp simd`; -fno-math-errno so
libm calls can vectorize; -fwrapv so signed overflow wraps as in NumPy. glibc's libmvec
(-lmvec) provides the vector math functions; it is linked when the compiler finds it.

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

from tracejit.errors import CompileError

FLAGS = (
    "-std=c++17",
    "-O3",
    "-march=native",
    "-fopenmp",
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
def extra_libs(cxx: str) -> tuple[str, ...]:
    """-lmvec where the toolchain has libmvec (glibc), else nothing (scalar libm calls)."""
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


def command(cxx: str, source: str, library: str) -> list[str]:
    return [*shlex.split(cxx), *FLAGS, source, "-o", library, *extra_libs(cxx)]


def compile_library(cxx: str, source: str, library: str) -> None:
    """Compile `source` into the shared library `library`, or raise CompileError.

    On failure the source is copied to a directory that is kept, and the error names it.
    """
    cmd = command(cxx, source, library)
    try:
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


__all__ = ["FLAGS", "command", "compile_library", "extra_libs", "find_compiler"]
