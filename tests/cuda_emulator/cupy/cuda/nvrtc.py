"""`cupy.cuda.nvrtc` of the emulator: CUDA C -> a host shared library, by g++ and emu.h.

The "cubin" is the library's bytes; `cupy.RawModule(path=...)` loads it with ctypes. Every
`extern "C" __global__` kernel gets a host entry `tjemu_<name>` (emu.h's TJEMU_ENTRY). A
kernel's dynamic shared memory, `extern __shared__ T name[];`, becomes a pointer to the launch's
buffer (emu.h `tjemu::dynamic_shared`), as a `static` array cannot be `extern`.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import tempfile
from pathlib import Path

HEADER = Path(__file__).resolve().parent.parent / "emu.h"
KERNEL = re.compile(
    r'extern\s+"C"\s+__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s+)?(\w+)\s*\('
)
DYNAMIC_SHARED = re.compile(
    r"extern\s+__shared__\s+(?:__align__\(\d+\)\s+)?([\w ]+?)\s+(\w+)\s*\[\s*\]\s*;"
)
FLAGS = [
    "-std=c++17", "-O1", "-fPIC", "-shared", "-w", "-ffp-contract=off", "-fno-strict-aliasing",
    "-fvisibility=hidden", "-U_FORTIFY_SOURCE",
]  # fmt: skip


class NVRTCError(RuntimeError):
    pass


class _Program:
    def __init__(self, source: str, name: str):
        self.source = source
        self.name = name
        self.log = ""
        self.binary = b""


def getVersion() -> tuple:
    """Distinct from any real NVRTC, and changes with emu.h and this file (tracejit's cache
    keys on it)."""
    digest = hashlib.sha256(HEADER.read_bytes() + Path(__file__).read_bytes()).hexdigest()
    return (0, "emulator-" + digest[:12])


def getSupportedArchs() -> tuple[int, ...]:
    return (90,)


def createProgram(source: str, name: str, headers, include_names) -> _Program:
    return _Program(source, name)


def _signature(source: str, start: int) -> str:
    """One letter per parameter of the kernel whose parameter list opens at `start`: `r` a
    `const T* __restrict__`, `w` a pointer the kernel may write, `c` another `const T*`."""
    params = source[start : source.index(")", start)].split(",")
    kinds = []
    for p in params:
        if "*" not in p:
            kinds.append("v")
        elif p.strip().startswith("const") and "__restrict__" in p:
            kinds.append("r")
        else:
            kinds.append("c" if p.strip().startswith("const") else "w")
    return "".join(kinds)


def compileProgram(prog: _Program, options) -> None:
    # each kernel's entry point, and its parameter kinds for RawKernel's aliasing check
    entries = "".join(
        f'\nTJEMU_ENTRY({m.group(1)})\nTJEMU_SIGNATURE({m.group(1)}, "{_signature(prog.source, m.end())}")'
        for m in KERNEL.finditer(prog.source)
    )
    with tempfile.TemporaryDirectory(prefix="tjemu-") as tmp:
        src, lib = Path(tmp, "kernel.cu"), Path(tmp, "kernel.so")
        source = DYNAMIC_SHARED.sub(r"\1* \2 = (\1*)tjemu::dynamic_shared();", prog.source)
        src.write_text(source + "\n" + entries + "\n")
        cmd = ["g++", *FLAGS, "-include", str(HEADER), "-x", "c++", str(src), "-o", str(lib)]
        done = subprocess.run(cmd, check=False, capture_output=True, text=True)
        prog.log = done.stderr
        if done.returncode != 0:
            raise NVRTCError(f"g++ failed ({done.returncode})")
        prog.binary = lib.read_bytes()


def getProgramLog(prog: _Program) -> str:
    return prog.log


def getCUBIN(prog: _Program) -> bytes:
    return prog.binary


getPTX = getCUBIN


def destroyProgram(prog: _Program) -> None:
    prog.binary = b""
