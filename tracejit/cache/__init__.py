"""Persistent compile cache: compiled libraries on disk, keyed by what produced them.

A backend describes a compilation by a dict of *key parts* (schedule text or traced graph,
backend name, compiler identity and version, flags, CPU identity, tracejit version, source
hashes) and asks for the library; the cache returns a stored one or builds it once.

API (what backends code against):

``cache_key(parts) -> str``
    sha256 hex of the canonical JSON of ``parts`` (tracejit.cache.keys).
``source_hash``, ``package_hash``, ``compiler_identity``, ``cpu_identity``
    the usual ingredients of key parts (tracejit.cache.keys).
``get_or_build(parts, source, build, suffix=".so", meta=None, files=None, load=None)``
    the library for ``cache_key(parts)``. On a miss it calls ``build(source_path,
    library_path)``, which must write the library at ``library_path`` (other files it leaves
    in that directory are discarded); ``files`` (name -> bytes) are stored beside it. With
    ``load``, returns ``load(library_path)``, run while the entry cannot be removed (so a
    concurrent ``cache clear`` or eviction cannot delete it between lookup and load);
    without, the library's path. An exception from ``build`` (e.g. `CompileError`)
    propagates and leaves no entry behind.
``lookup(parts, suffix=".so", load=None)``
    the same on a hit, None on a miss (nothing is built).
``count=False`` (both): the lookup is not counted in `cache_info`'s hits and misses (they
    count compiled functions; tracejit.cache.joint stores differentiated graphs too).
``invalidate(key, reason=None)``, ``cache_info()``, ``clear_cache()``.

Robustness (tests/backend/test_cache_faults.py): every file of an entry is listed in its meta.json
with size and sha256 and re-checked on each hit, so an entry with any damaged file (any
bytes, meta.json included) is reported once (`CacheCorruptionWarning`), removed and rebuilt.
Concurrent processes, ``kill -9`` mid-compile and ``cache clear`` during builds are safe by
the locking rules in tracejit.cache.store. When the cache directory cannot take a build
(read-only, full, not a directory) the process warns once (`CacheFallbackWarning`) and
builds into a private temporary directory for the rest of its life. Entries past
``tj.config.cache_max_bytes`` are evicted, least recently used first.

Hits and misses are logged on the ``"tracejit"`` logger with the key: at WARNING level
when ``tj.config.log_compiles`` is on, at DEBUG otherwise.

>>> import tracejit.cache as cache
>>> len(cache.cache_key({"backend": "cpu", "schedule": "k0: out = a + b"}))
64
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from tracejit.cache import locks, store
from tracejit.cache.keys import (
    _identities,  # noqa: F401 - tests reset it to see a fresh process
    cache_key,
    canonical_json,
    compiler_identity,
    cpu_identity,
    package_hash,
    source_hash,
)
from tracejit.config import config
from tracejit.errors import CacheError, CompileError

logger = logging.getLogger("tracejit")

# A build holding the lock longer than this is taken as stuck; compiling one schedule takes
# seconds (MEASURED.md: 0.14-0.4 s per translation unit), so ten minutes is generous.
LOCK_TIMEOUT_S = 600.0


class CacheCorruptionWarning(UserWarning):
    """A cache entry was truncated, corrupt or unloadable; it was removed and rebuilt."""


class CacheFallbackWarning(UserWarning):
    """The cache directory could not take a build; this process uses a private one."""


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


class _StorageError(Exception):
    """The cache directory cannot take our files (read-only, full, not a directory)."""


# --------------------------------------------------------------------------- roots


def cache_root() -> Path:
    """The cache directory: ``tj.config.cache_dir``, read now."""
    return Path(os.path.expanduser(str(config.cache_dir)))


def entry_dir(key: str) -> Path:
    """Where the entry of `key` lives in the cache directory (whether or not it exists)."""
    return store.entry_path(cache_root(), key)


_private: dict[str, Path] = {}
_private_lock = threading.Lock()


def _roots() -> list[Path]:
    """Where to look: the cache directory, then this process's fallback for it if any."""
    root = cache_root()
    private = _private.get(str(root))
    return [root] if private is None else [root, private]


def _fall_back(root: Path, exc: BaseException) -> Path:
    with _private_lock:
        private = _private.get(str(root))
        if private is None:
            private = Path(tempfile.mkdtemp(prefix="tracejit-private-cache-"))
            atexit.register(shutil.rmtree, private, ignore_errors=True)
            _private[str(root)] = private
            warnings.warn(
                f"the tracejit cache directory {root} cannot take compiled code ({exc}); "
                f"this process compiles into {private} instead (removed at exit). Set "
                f"TRACEJIT_CACHE_DIR (or tj.config.cache_dir) to a writable directory with "
                f"free space to keep compiled code between runs",
                CacheFallbackWarning,
                stacklevel=5,
            )
        return private


def _log(message: str) -> None:
    logger.log(logging.WARNING if config.log_compiles else logging.DEBUG, message)


def _report(entry: Path, defect: str) -> None:
    warnings.warn(
        f"tracejit cache entry {entry} is unusable: {defect}; removed it and rebuilding",
        CacheCorruptionWarning,
        stacklevel=4,
    )


# --------------------------------------------------------------------------- lookups


@contextmanager
def _shared_lock(root: Path, key: str) -> Iterator[bool]:
    """Hold the key's lock shared (True), or yield False: a build holds it, or no lock dir."""
    path = store.lock_path(root, key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = locks.try_acquire(path, shared=True)
    except OSError:  # a read-only cache: nothing here removes entries, read unlocked
        yield True
        return
    if fd is None:
        yield False
        return
    try:
        yield True
    finally:
        locks.release(fd)


def _hit(key: str, lib: Path, load: Callable | None, count: bool = True):
    if count:
        _stats.count(hit=True)
    _log(f"tracejit cache hit {key}: {lib}")
    store.touch(lib.parent)
    return str(lib) if load is None else load(str(lib))


class _Miss(Exception):
    def __init__(self, reason: str | None = None):
        self.reason = reason


def _lookup(key: str, suffix: str, load: Callable | None, count: bool = True):
    reason = None
    for root in _roots():
        entry = store.entry_path(root, key)
        with _shared_lock(root, key) as locked:
            if not locked:
                continue  # a build of this key is in flight: wait for it under its lock
            defect = store.check_entry(entry, suffix)
            if defect is None:
                try:
                    return _hit(key, entry / ("lib" + suffix), load, count)
                except Exception as exc:  # noqa: BLE001 - unloadable: rebuilt, load re-raises
                    reason = f"it failed to load ({type(exc).__name__}: {exc})"
    raise _Miss(reason)


def lookup(
    parts: dict,
    suffix: str = ".so",
    load: Callable[[str], object] | None = None,
    count: bool = True,
):
    """The stored library of `parts` (``load(path)`` if given, else its path), or None."""
    try:
        return _lookup(cache_key(parts), suffix, load, count)
    except _Miss:
        return None


# --------------------------------------------------------------------------- builds


def get_or_build(
    parts: dict,
    source: str,
    build: Callable[[str, str], None],
    suffix: str = ".so",
    meta: dict | None = None,
    files: dict[str, bytes] | None = None,
    load: Callable[[str], object] | None = None,
    count: bool = True,
):
    """The library for `parts`, built by ``build(source_path, library_path)`` once.

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
    try:
        return _lookup(key, suffix, load, count)
    except _Miss as miss:
        reason = miss.reason
    job = _Job(key, parts, source, build, suffix, meta, files or {}, load, reason)
    job.count = count
    root = _roots()[-1]
    try:
        return job.run(root)
    except _StorageError as exc:
        if root != cache_root():
            raise CacheError(f"cannot build into the private cache {root}: {exc}") from exc
        return job.run(_fall_back(root, exc.__cause__ or exc))


def _storage(exc: BaseException) -> bool:
    if isinstance(exc, OSError):
        return exc.errno in store.STORAGE_ERRNOS
    return isinstance(exc, CompileError) and os.strerror(28) in str(exc)  # ENOSPC


class _Job:
    """One build of one key into one cache root."""

    def __init__(self, key, parts, source, build, suffix, meta, files, load, reason):
        self.key, self.parts, self.source, self.build = key, parts, source, build
        self.suffix, self.meta, self.files, self.load = suffix, meta, files, load
        self.reason = reason  # why the stored entry must be replaced, if it failed to load
        self.counted = False
        self.count = True  # whether cache_info counts this job (get_or_build's `count`)

    def run(self, root: Path):
        path = store.lock_path(root, self.key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = locks.acquire(path, timeout=LOCK_TIMEOUT_S)
        except locks.LockTimeout as exc:
            raise CacheError(
                f"waited {LOCK_TIMEOUT_S:.0f} s for {path}, held by another process compiling "
                f"the same code; if none is running, delete that file"
            ) from exc
        except OSError as exc:
            if _storage(exc):
                raise _StorageError(str(exc)) from exc
            raise
        try:
            result = self._locked(root)
        finally:
            locks.release(fd)
        max_bytes = int(config.cache_max_bytes)
        if max_bytes > 0:
            store.evict(root, max_bytes, keep=self.key)
        return result

    def _locked(self, root: Path):
        entry = store.entry_path(root, self.key)
        lib = entry / ("lib" + self.suffix)
        defect = store.check_entry(entry, self.suffix)
        if defect is None and self.reason is None:  # another process built it meanwhile
            return _hit(self.key, lib, self.load, self.count)
        if defect is None or defect != "missing":
            _report(entry, self.reason or defect)
        if entry.exists():  # corrupt, unloadable, or half-published by an older tracejit
            store.remove_tree(entry)
        if self.count and not self.counted:  # a build retried in the private fallback is one miss
            _stats.count(hit=False)
            self.counted = True
        _log(f"tracejit cache miss {self.key}: compiling into {entry}")
        self.reason = None
        try:
            store.sweep_builds(root)
            with store.build_dir(root, self.key) as work:
                self._build(work)
                entry.parent.mkdir(parents=True, exist_ok=True)
                store.publish(work, entry)
        except (OSError, CompileError) as exc:
            if _storage(exc):
                raise _StorageError(str(exc)) from exc
            raise
        return str(lib) if self.load is None else self.load(str(lib))

    def _build(self, work: Path) -> None:
        from tracejit import __version__

        src, lib = work / store.source_name(self.suffix), work / ("lib" + self.suffix)
        src.write_text(self.source, encoding="utf-8")
        start = time.perf_counter()
        self.build(str(src), str(lib))
        seconds = time.perf_counter() - start
        if not lib.is_file() or lib.stat().st_size == 0:
            raise CacheError(
                f"the build step returned without writing a library at {lib}; "
                f"this is a tracejit backend bug, please report it"
            )
        for name, data in self.files.items():
            (work / name).write_bytes(data)
        record = {
            "format": store.META_FORMAT,
            "key": self.key,
            "parts": self.parts,
            "meta": self.meta or {},
            "compile_seconds": round(seconds, 6),
            "created": time.time(),
            "tracejit_version": __version__,
            "library": {"name": lib.name, "size": lib.stat().st_size},
            "source": src.name,
        }
        store.write_meta(work, record, keep=[src.name, lib.name, *self.files])


def invalidate(key: str, reason: str | None = None) -> None:
    """Remove the entry of `key` (e.g. its library failed to load); report `reason` if given.

    >>> invalidate(cache_key({"example": "never built"}), reason="dlopen failed")  # no entry
    """
    for root in _roots():
        entry = store.entry_path(root, key)
        if not entry.exists():
            continue
        if reason is not None:
            _report(entry, reason)
        path = store.lock_path(root, key)
        try:
            fd = locks.acquire(path, timeout=LOCK_TIMEOUT_S)
        except OSError:
            store.remove_tree(entry)  # a read-only lock dir: nobody can be building here
            continue
        try:
            store.remove_tree(entry)
        finally:
            locks.release(fd)


# --------------------------------------------------------------------------- whole cache


def cache_info() -> dict:
    """The cache directory, its entry count, size and size cap, and this process's hits and
    misses.

    >>> import tracejit as tj
    >>> sorted(tj.cache_info())
    ['bytes', 'dir', 'entries', 'hits', 'max_bytes', 'misses']
    """
    root = cache_root()
    found = [e for e in store.entries(root) if (e / store.META_NAME).is_file()]
    return {
        "dir": str(root),
        "entries": len(found),
        "bytes": sum(store.tree_bytes(e) for e in found),
        "hits": _stats.hits,
        "misses": _stats.misses,
        "max_bytes": int(config.cache_max_bytes),
    }


def clear_cache() -> dict:
    """Remove every entry, build leftover, lock file and toolchain record; return what went.

    Safe while other processes compile: an entry being built or loaded right now, and
    the directory of a build in flight, are left alone (``in_use`` counts them); the build
    finishes and publishes its entry.

    >>> import tempfile, tracejit as tj
    >>> saved, tj.config.cache_dir = tj.config.cache_dir, tempfile.mkdtemp()
    >>> sorted(clear_cache())
    ['bytes', 'dir', 'entries', 'in_use']
    >>> tj.config.cache_dir = saved
    """
    root = cache_root()
    info = cache_info()
    in_use = 0
    for r in _roots():
        store.sweep_builds(r)
        for entry in store.entries(r):
            if not store.remove_entry_if_idle(r, entry):
                in_use += r == root
        store.remove_idle_locks(r)
        store.remove_tree(r / "toolchain")
        for sub in [*(p for p in r.glob("??") if p.is_dir()), r / "tmp", r / "locks"]:
            try:
                sub.rmdir()  # only when empty: holds a live build, or something not ours
            except OSError:
                pass
    return {
        "dir": info["dir"],
        "entries": info["entries"] - in_use,
        "bytes": info["bytes"],
        "in_use": in_use,
    }


__all__ = [
    "CacheCorruptionWarning",
    "CacheFallbackWarning",
    "cache_info",
    "cache_key",
    "cache_root",
    "canonical_json",
    "clear_cache",
    "compiler_identity",
    "cpu_identity",
    "entry_dir",
    "get_or_build",
    "invalidate",
    "lookup",
    "package_hash",
    "source_hash",
]
