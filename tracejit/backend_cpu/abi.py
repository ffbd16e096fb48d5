"""cpp/abi.h, the one description of what generated C++ and the runtime pass each other.

The code generator copies its text into every unit (`ABI`); `check_runtime_abi` refuses a
runtime module (tracejit/_core) built from another text, whose TjContext would have another
layout than the generated code reads.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from tracejit.errors import CompileError


def _abi_header() -> str:
    """The text of cpp/abi.h (TjContext, TjPool), which the runtime's executor includes: in an
    installed wheel it lies in the package (CMakeLists.txt installs it), in a source tree in
    cpp/."""
    package = Path(__file__).resolve().parents[1]
    for path in (package / "abi.h", package.parent / "cpp" / "abi.h"):
        if path.is_file():
            return path.read_text(encoding="utf-8")
    raise CompileError(f"cpp/abi.h is missing (looked in {package} and {package.parent / 'cpp'})")


ABI = _abi_header()


@functools.cache
def check_runtime_abi() -> None:
    """Raise CompileError unless tracejit/_core was built from the cpp/abi.h that generated
    code copies: a stale module would hand generated code a TjContext of another layout."""
    from tracejit import _core

    built = getattr(_core, "abi_sha256", lambda: "")()
    if built != hashlib.sha256(ABI.encode("utf-8")).hexdigest():
        raise CompileError(
            "tracejit's C++ runtime (tracejit/_core) was built from another cpp/abi.h than the "
            "code generator uses: rebuild it (pip install -e ., or rebuild "
            "its build folder (cmake --build) and copy _core*.so into tracejit/)"
        )
