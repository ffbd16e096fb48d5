"""Persistent compile cache: compiled libraries on disk, keyed by what produced them.

A backend describes a compilation by a dict of *key parts* (schedule text, backend name,
compiler identity and version, flags, tracejit version, a hash of its codegen sources) and
asks for the library; the cache returns the path of a stored one or builds it once.

API (what backends code against):

``cache_key(parts) -> str``
    sha256 hex of the canonical JSON of ``parts`` (sorted keys, no whitespace), so the key
    is the same in every process whatever the dict order or ``PYTHONHASHSEED``.
``source_hash(paths_or_modules) -> str``
    sha256 over the contents of codegen source files (paths or imported modules).
``compiler_identity(cxx) -> str``
    the compiler's resolved path and ``cxx --version`` text; runs it once per process.
``get_or_build(parts, source, build, suffix=".so", meta=None) -> str``
    the path of the library for ``cache_key(parts)``. On a miss it calls
    ``build(source_path, library_path)``, which must write the library at ``library_path``
    (other files it leaves in that directory are discarded). An exception from ``build``
    (e.g. `CompileError`) propagates and leaves no entry behind.
``invalidate(key, reason=None)``
    removes one entry (e.g. its library failed to load); the next ``get_or_build`` rebuilds.
    The key of a returned path is ``cache_key(parts)``, its parent directory's name.
``cache_info() -> dict(dir, entries, bytes, hits, misses)`` and ``clear_cache()``.

Layout under ``tj.config.cache_dir`` (read at every call)::

    <key[:2]>/<key>/lib.so          the library (``"lib" + suffix``)
    <key[:2]>/<key>/source.cpp      the source it was built from (``.cu`` for CUDA suffixes)
    <key[:2]>/<key>/meta.json       key parts, caller's meta (input specs), compile time,
                                    tracejit version, the library's size and sha256
    locks/<key>.lock                serializes the builds of one key across processes
    tmp/                            builds in progress (same filesystem, so renames are atomic)

An entry exists only once its ``meta.json`` does: files are built in a temporary directory
and moved in with ``os.replace``, ``meta.json`` last. A hit re-checks the library's size and
sha256 (measured: ~60 us of a ~150 us hit for a 52 KB library; dlopen takes ~180 us), so a
truncated or corrupt entry is reported once (a `CacheCorruptionWarning` naming the path), removed and
rebuilt, never trusted.

Hits and misses are logged on the ``"tracejit"`` logger with the key: at WARNING level
when ``tj.config.log_compiles`` is on (so they print without logging setup, as JAX's
``jax_log_compiles`` does), at DEBUG otherwise.

>>> import tracejit.cache as cache
>>> len(cache.cache_key({"backend": "cpu", "schedule": "k0: out = a + b"}))
64
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
import time
import types
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from tracejit.config import config
from tracejit.errors import CacheError, CompileError

logger = logging.getLogger("tracejit")

META_NAME = "meta.json"
# Bumped when the entry layout or meta.json schema changes; older entries then read as corrupt.
META_FORMAT = 1
# A build holding the lock longer than this is taken as stuck; compiling one schedule takes
# seconds (MEASURED.md: 0.14-0.4 s per translation unit), so ten minutes is generous.
LOCK_TIMEOUT_S = 600.0
# A build directory in tmp/ untouched for this long belongs to a process that was killed.
STALE_BUILD_S = 24 * 3600.0
# The source file name follows the library suffix: CUDA artifacts come from .cu files.
_SOURCE_SUFFIXES = {".cubin": ".cu", ".ptx": ".cu", ".fatbin": ".cu"}
_SHARD = re.compile(r"[0-9a-f]{2}")
_KEY = re.compile(r"[0-9a-f]{64}")


class CacheCorruptionWarning(UserWarning):
    """A cache entry was truncated, corrupt or unloadable; it was removed and rebuilt."""


class _Stats:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def count(self, hit: bool) -> None:
        with self.lock:
            if hit:
                self.hits += 1
            else:
                self.misses += 1


_stats = _Stats()


# --------------------------------------------------------------------------- keys


def _reject(obj: object) -> object:
    if isinstance(obj, (set, frozenset)):
        return sorted(obj, key=repr)
    raise TypeError(
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
            raise TypeError(f"module {item.__name__} has no source file to hash")
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


# --------------------------------------------------------------------------- layout


def cache_root() -> Path:
    """The cache directory: ``tj.config.cache_dir``, read now."""
    return Path(os.path.expanduser(str(config.cache_dir)))


def entry_dir(key: str) -> Path:
    """Where the entry of `key` lives (whether or not it exists)."""
    return cache_root() / key[:2] / key


def _lock_path(key: str) -> Path:
    return cache_root() / "locks" / f"{key}.lock"


def _source_name(suffix: str) -> str:
    return "source" + _SOURCE_SUFFIXES.get(suffix, ".cpp")


def _sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _log(message: str) -> None:
    logger.log(logging.WARNING if config.log_compiles else logging.DEBUG, message)


# --------------------------------------------------------------------------- entries


def _check_entry(entry: Path, suffix: str) -> str | None:
    """None when the entry is complete and intact, "missing" when absent, else the defect."""
    meta_path = entry / META_NAME
    try:
        text = meta_path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return f"meta.json unreadable ({exc})"
    try:
        meta = json.loads(text)
        expected = meta["library"]
        size, digest = int(expected["size"]), str(expected["sha256"])
    except (ValueError, KeyError, TypeError) as exc:
        return f"meta.json is corrupt ({type(exc).__name__}: {exc})"
    if meta.get("format") != META_FORMAT or meta.get("key") != entry.name:
        return "meta.json belongs to another format or key"
    lib = entry / ("lib" + suffix)
    try:
        actual = lib.stat().st_size
    except OSError:
        return f"library {lib.name} is missing"
    if actual != size:
        return f"library is {actual} bytes, meta.json says {size} (truncated?)"
    if _sha256_file(lib) != digest:
        return "library checksum does not match meta.json"
    return None


def _remove_entry(entry: Path) -> None:
    # The <key[:2]> shard stays: removing it could race another key's publish into it.
    shutil.rmtree(entry, ignore_errors=True)


def _sweep_stale_builds(tmp: Path) -> None:
    """Remove build directories left behind by processes killed mid-build."""
    cutoff = time.time() - STALE_BUILD_S
    for work in tmp.iterdir():
        try:
            if work.stat().st_mtime < cutoff:
                shutil.rmtree(work, ignore_errors=True)
        except OSError:
            pass  # another process swept it first


def _report(entry: Path, defect: str) -> None:
    warnings.warn(
        f"tracejit cache entry {entry} is unusable: {defect}; removed it and rebuilding",
        CacheCorruptionWarning,
        stacklevel=3,
    )


def _mkdirs(path: Path) -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CacheError(
            f"cannot create the tracejit cache directory {path}: {exc}; set "
            f"TRACEJIT_CACHE_DIR (or tj.config.cache_dir) to a writable directory"
        ) from exc


def _build_and_publish(
    key: str,
    parts: dict,
    source: str,
    build: Callable[[str, str], None],
    suffix: str,
    meta: dict | None,
) -> Path:
    """Build in a temp dir inside the cache, then move the files in, meta.json last."""
    from tracejit import __version__

    root = cache_root()
    _mkdirs(root / "tmp")
    _sweep_stale_builds(root / "tmp")
    work = Path(tempfile.mkdtemp(prefix=key[:16] + "-", dir=root / "tmp"))
    try:
        src, lib = work / _source_name(suffix), work / ("lib" + suffix)
        src.write_text(source, encoding="utf-8")
        start = time.perf_counter()
        build(str(src), str(lib))
        seconds = time.perf_counter() - start
        if not lib.is_file() or lib.stat().st_size == 0:
            raise CacheError(
                f"the build step returned without writing a library at {lib}; "
                f"this is a tracejit backend bug, please report it"
            )
        record = {
            "format": META_FORMAT,
            "key": key,
            "parts": parts,
            "meta": meta or {},
            "compile_seconds": round(seconds, 6),
            "created": time.time(),
            "tracejit_version": __version__,
            "library": {"name": lib.name, "size": lib.stat().st_size, "sha256": _sha256_file(lib)},
            "source": src.name,
        }
        (work / META_NAME).write_text(canonical_json(record), encoding="utf-8")
        entry = root / key[:2] / key
        _mkdirs(entry)
        for name in (src.name, lib.name, META_NAME):
            os.replace(work / name, entry / name)
        return entry / lib.name
    finally:
        shutil.rmtree(work, ignore_errors=True)


def get_or_build(
    parts: dict,
    source: str,
    build: Callable[[str, str], None],
    suffix: str = ".so",
    meta: dict | None = None,
) -> str:
    """Path of the library for `parts`, built by ``build(source_path, library_path)`` once.

    Concurrent callers (threads or processes) of one key build it once; the others wait
    for the lock and then hit. The key of the returned entry is ``cache_key(parts)``.

    >>> import subprocess, tracejit.cache as cache
    >>> def build(src, lib):
    ...     subprocess.run(["g++", "-shared", "-fPIC", "-x", "c++", src, "-o", lib], check=True)
    >>> path = cache.get_or_build({"demo": 1}, 'extern "C" int f() { return 1; }', build)
    >>> path.endswith("lib.so")
    True
    """
    key = cache_key(parts)
    entry = entry_dir(key)
    lib = entry / ("lib" + suffix)
    if _check_entry(entry, suffix) is None:
        return _hit(key, lib)
    with _key_lock(key):
        defect = _check_entry(entry, suffix)
        if defect is None:  # another process built it while we waited
            return _hit(key, lib)
        if defect != "missing":
            _report(entry, defect)
        if entry.exists():  # corrupt, or left half-published by a crashed process
            _remove_entry(entry)
        _stats.count(hit=False)
        _log(f"tracejit cache miss {key}: compiling into {entry}")
        return str(_build_and_publish(key, parts, source, build, suffix, meta))


@contextmanager
def _key_lock(key: str) -> Iterator[None]:
    """Hold the inter-process lock of one key (flock: released if the holder dies)."""
    # filelock is imported here, not at the top: it costs ~10 ms of `import tracejit`, and
    # only misses need it.
    from filelock import FileLock, Timeout

    path = _lock_path(key)
    _mkdirs(path.parent)
    lock = FileLock(str(path), timeout=LOCK_TIMEOUT_S)
    try:
        lock.acquire()
    except Timeout as exc:
        raise CacheError(
            f"waited {LOCK_TIMEOUT_S:.0f} s for {path}, held by another process compiling "
            f"the same code; if none is running, delete that file"
        ) from exc
    try:
        yield
    finally:
        lock.release()


def _hit(key: str, lib: Path) -> str:
    _stats.count(hit=True)
    _log(f"tracejit cache hit {key}: {lib}")
    return str(lib)


def invalidate(key: str, reason: str | None = None) -> None:
    """Remove the entry of `key` (e.g. its library failed to load); report `reason` if given.

    >>> invalidate(cache_key({"example": "never built"}), reason="dlopen failed")  # no entry
    """
    entry = entry_dir(key)
    with _key_lock(key):
        if reason is not None and entry.exists():
            _report(entry, reason)
        _remove_entry(entry)


# --------------------------------------------------------------------------- whole cache


def _entries(root: Path) -> list[Path]:
    return sorted(p.parent for p in root.glob(f"??/*/{META_NAME}"))


def _tree_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def cache_info() -> dict:
    """The cache directory, its entry count and size, and this process's hits and misses.

    >>> import tracejit as tj
    >>> sorted(tj.cache_info())
    ['bytes', 'dir', 'entries', 'hits', 'misses']
    """
    root = cache_root()
    entries = _entries(root) if root.is_dir() else []
    return {
        "dir": str(root),
        "entries": len(entries),
        "bytes": sum(_tree_bytes(e) for e in entries),
        "hits": _stats.hits,
        "misses": _stats.misses,
    }


def clear_cache() -> dict:
    """Remove every entry, build leftover and lock file; return what was removed.

    Run it when no other process is compiling: a build in flight is not damaged (it
    re-creates its directories) but may be published after the clear.

    >>> sorted(clear_cache())
    ['bytes', 'dir', 'entries']
    """
    root = cache_root()
    info = cache_info()
    if root.is_dir():
        # Only names this module creates: cache_dir may point at a directory shared with others.
        for shard in root.iterdir():
            if _SHARD.fullmatch(shard.name) and shard.is_dir():
                for entry in shard.iterdir():
                    if _KEY.fullmatch(entry.name):
                        _remove_entry(entry)
                try:
                    shard.rmdir()
                except OSError:
                    pass  # holds something this module did not create, or a new entry
        shutil.rmtree(root / "tmp", ignore_errors=True)
        for lock in root.glob("locks/*.lock"):
            lock.unlink(missing_ok=True)
        try:
            (root / "locks").rmdir()
        except OSError:
            pass
    return {"dir": info["dir"], "entries": info["entries"], "bytes": info["bytes"]}


__all__ = [
    "CacheCorruptionWarning",
    "cache_info",
    "cache_key",
    "cache_root",
    "canonical_json",
    "clear_cache",
    "compiler_identity",
    "entry_dir",
    "get_or_build",
    "invalidate",
    "source_hash",
]
