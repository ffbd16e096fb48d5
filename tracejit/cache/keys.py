"""What cache keys are made of: canonical JSON, source hashes, compiler and CPU identity.

``cache_key(parts)`` is the sha256 hex of the canonical JSON of ``parts`` (sorted keys, no
whitespace), so the key is the same in every process whatever the dict order or
``PYTHONHASHSEED``.

>>> len(cache_key({"backend": "cpu", "schedule": "k0: out = a + b"}))
64
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
import types
from collections.abc import Iterable
from pathlib import Path

from tracejit.errors import CompileError, TracejitTypeError


def _reject(obj: object) -> object:
    if isinstance(obj, (set, frozenset)):
        return sorted(obj, key=repr)
    raise TracejitTypeError(
        f"cache key parts must be JSON values (str, int, float, bool, None, list, dict), "
        f"got {type(obj).__name__}: {obj!r}; convert it to a string first"
    )


def canonical_json(parts: dict) -> str:
    """The JSON text `cache_key` hashes: sorted keys, no whitespace, tuples as lists.

    >>> canonical_json({"b": 1, "a": (2, 3)})
    '{"a":[2,3],"b":1}'
    """
    return json.dumps(
        parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_reject
    )


def cache_key(parts: dict) -> str:
    """sha256 hex of the canonical JSON of `parts`; stable across processes and runs.

    >>> cache_key({"a": 1, "b": 2}) == cache_key({"b": 2, "a": 1})
    True
    """
    return hashlib.sha256(canonical_json(parts).encode("utf-8")).hexdigest()


def _file_of(item: str | os.PathLike | types.ModuleType) -> Path:
    if isinstance(item, types.ModuleType):
        if not getattr(item, "__file__", None):
            raise TracejitTypeError(f"module {item.__name__} has no source file to hash")
        return Path(item.__file__)
    return Path(item)


def source_hash(
    paths_or_modules: str | os.PathLike | types.ModuleType | Iterable,
) -> str:
    """sha256 over the names and contents of source files, independent of their order.

    Give the codegen modules (or their paths): editing one changes every key built with it.

    >>> import tracejit.cache as cache
    >>> len(source_hash([cache]))
    64
    """
    if isinstance(paths_or_modules, (str, os.PathLike, types.ModuleType)):
        paths_or_modules = [paths_or_modules]
    digests = []
    for item in paths_or_modules:
        path = _file_of(item)
        digests.append(f"{path.name}:{hashlib.sha256(path.read_bytes()).hexdigest()}")
    return hashlib.sha256("\n".join(sorted(digests)).encode()).hexdigest()


@functools.cache
def package_hash() -> str:
    """sha256 over every Python source of tracejit (and the runtime extension's identity).

    Keys taken before the compile phases (`tracejit.backends.graph_parts`) depend on
    everything that runs after tracing: passes, fusion, code generation. Hashing the whole
    package is simpler and safer than listing those modules. The digest is remembered in
    ``<cache_dir>/toolchain/`` under the files' names, sizes and mtimes, so a fresh process
    stats the files (~1 ms) instead of reading and hashing them (~5-30 ms).
    """
    root = Path(__file__).resolve().parent.parent
    memo = _package_memo(_stat_signature(str(root)))
    try:
        text = memo.read_text(encoding="ascii").strip()
        if _HEX64.fullmatch(text):
            return text
    except (OSError, ValueError):
        pass
    sources = sorted(p for p in root.rglob("*.py"))
    digest = hashlib.sha256()
    for path in sources:
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    for ext in sorted(root.glob("_core*")):  # the executor ABI: size and mtime are enough
        st = ext.stat()
        digest.update(f"{ext.name}:{st.st_size}:{st.st_mtime_ns}".encode())
    value = digest.hexdigest()
    write_atomic(memo, value)
    return value


_HEX64 = re.compile(r"[0-9a-f]{64}")


def _stat_signature(root: str) -> str:
    """sha256 of the name, size and mtime of every Python source under `root` and of the
    runtime extension (`os.scandir`: ~2 ms for the package, where `Path.rglob` took ~5)."""
    rows, stack = [], [root]
    while stack:
        folder = stack.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        stack.append(entry.path)
                elif entry.name.endswith(".py") or (
                    folder == root and entry.name.startswith("_core")
                ):
                    st = entry.stat()
                    rows.append(f"{entry.path[len(root) + 1 :]}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("\n".join(sorted(rows)).encode()).hexdigest()


def _package_memo(signature: str) -> Path:
    from tracejit.cache import cache_root

    return cache_root() / "toolchain" / f"tracejit-{signature[:32]}.sha256"


def write_atomic(path: str | os.PathLike, text: str) -> None:
    """`text` into `path` through a temporary file renamed over it (a reader sees all of it or
    none); a read-only or full cache (or a concurrent clear) only costs the work again."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    except OSError:
        pass


_identities: dict[str, str] = {}
_identities_lock = threading.Lock()


def compiler_identity(cxx: str) -> str:
    """The compiler's resolved path plus its ``--version`` text; run once per process.

    >>> "g++" in compiler_identity("g++")
    True
    """
    with _identities_lock:
        if cxx not in _identities:
            _identities[cxx] = _query_compiler(cxx)
        return _identities[cxx]


def _query_compiler(cxx: str) -> str:
    # CXX may carry flags ("g++ -fsanitize=address"): they are part of the identity
    argv = shlex.split(cxx) or [cxx]
    resolved = shutil.which(argv[0])
    if resolved is None:
        raise CompileError(
            f"C++ compiler {cxx!r} was not found on PATH; install one (e.g. `apt-get install "
            f"g++`) or point tracejit at it with the CXX environment variable"
        )
    try:
        proc = subprocess.run(
            [resolved, "--version"], capture_output=True, text=True, timeout=60, check=True
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise CompileError(f"could not run `{cxx} --version`: {exc}") from exc
    flags = " ".join(argv[1:])
    return f"{os.path.realpath(resolved)} {flags}".rstrip() + f"\n{proc.stdout.strip()}"


_CPUINFO_FIELDS = ("vendor_id", "cpu family", "model", "model name", "flags", "isa", "features")


@functools.cache
def cpu_identity() -> str:
    """What `-march=native` builds for: the CPU's vendor, model and feature flags.

    Libraries hold code for this CPU (AVX-512 on one machine, not on another), so a cache
    shared between machines (a network home, a restored CI cache) must not hand one
    machine's library to another. Read from /proc/cpuinfo's first processor (~1 ms once
    per process); elsewhere the platform's machine and processor names.

    >>> len(cpu_identity()) == 64
    True
    """
    lines = []
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if not line.strip():
                    break  # the first processor describes them all
                name, _, value = line.partition(":")
                if name.strip().lower() in _CPUINFO_FIELDS:
                    words = value.split()
                    lines.append(f"{name.strip()}:{' '.join(sorted(words))}")
    except OSError:
        pass
    # platform.processor() runs `uname -p` on Linux (a process start, ~5-15 ms of a fresh
    # process's first call): asked only where /proc/cpuinfo says nothing
    text = platform.machine() + "\n" + ("\n".join(lines) if lines else platform.processor())
    return hashlib.sha256(text.encode()).hexdigest()


__all__ = [
    "cache_key",
    "canonical_json",
    "compiler_identity",
    "cpu_identity",
    "package_hash",
    "source_hash",
]
