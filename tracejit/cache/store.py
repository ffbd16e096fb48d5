"""Cache entries on disk: where they live, how they are checked, built, published and removed.

Layout under a cache root (``tj.config.cache_dir``, or this process's private fallback)::

    <key[:2]>/<key>/meta.json     key parts, caller's meta, compile time, tracejit version,
                                  and the size and sha256 of every other file of the entry
    <key[:2]>/<key>/lib.so        the library (``"lib" + suffix``), source.cpp, extra files
    locks/<key>.lock              the key's lock: builders hold it exclusively, readers shared
    tmp/<name>/ + tmp/<name>.lock a build in flight and the lock its builder holds
    toolchain/                    compiler facts (tracejit.cache.toolchain)

Invariants that make concurrent processes (and a concurrent `cache clear`) safe:

* An entry appears whole: it is built in ``tmp/<name>/`` and renamed into place (one
  ``rename`` of the directory) while its builder holds the key lock.
* Only a holder of the exclusive key lock removes an entry; only a holder of a build's lock
  removes that build's directory, and a builder takes that lock before it creates the
  directory. A killed builder's lock is free (the kernel drops it), so its leftovers are
  swept by the next build or `cache clear`; a live build's never are.
* A lock file is unlinked only by its exclusive holder (tracejit.cache.locks).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import secrets
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tracejit.cache import locks
from tracejit.errors import TracejitTypeError, TracejitValueError

META_NAME = "meta.json"
# Bumped when the entry layout or meta.json schema changes; older entries then read as corrupt.
META_FORMAT = 2
# A build directory without a lock file comes from an older tracejit; swept after this long.
LEGACY_BUILD_S = 3600.0
# The source file name follows the library suffix: CUDA artifacts come from .cu files.
# ".pkl": a CUDA program stored before NVRTC (backend_cuda.PROGRAM_SUFFIX).
_SOURCE_SUFFIXES = {".cubin": ".cu", ".ptx": ".cu", ".fatbin": ".cu", ".pkl": ".cu"}
# errno values that mean "this directory cannot take our files": fall back, do not fail.
STORAGE_ERRNOS = frozenset(
    {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.ENOTDIR}
)


def source_name(suffix: str) -> str:
    return "source" + _SOURCE_SUFFIXES.get(suffix, ".cpp")


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def entry_path(root: Path, key: str) -> Path:
    return root / key[:2] / key


def lock_path(root: Path, key: str) -> Path:
    return root / "locks" / f"{key}.lock"


# --------------------------------------------------------------------------- checking


def _file_record(path: Path) -> dict:
    return {"size": path.stat().st_size, "sha256": sha256_file(path)}


def _read_meta(entry: Path) -> dict | str:
    """The parsed meta.json, "missing", or a description of what is wrong with it."""
    try:
        raw = (entry / META_NAME).read_bytes()
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return f"meta.json unreadable ({exc})"
    try:
        meta = json.loads(raw.decode("utf-8"))
        files = meta["files"]
        if not isinstance(files, dict) or not files:
            raise TracejitTypeError("files is not a non-empty object")
        for name, rec in files.items():
            if Path(name).name != name or name == META_NAME:
                raise TracejitValueError(f"bad file name {name!r}")
            int(rec["size"]), str(rec["sha256"])
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        return f"meta.json is corrupt ({type(exc).__name__}: {exc})"
    if not isinstance(meta, dict) or meta.get("format") != META_FORMAT:
        return "meta.json belongs to another format"
    if meta.get("key") != entry.name:
        return "meta.json belongs to another key"
    return meta


def check_entry(entry: Path, suffix: str) -> str | None:
    """None when the entry is complete and intact, "missing" when absent, else the defect."""
    meta = _read_meta(entry)
    if isinstance(meta, str):
        return meta
    files = meta["files"]
    if "lib" + suffix not in files:
        return f"entry has no lib{suffix}"
    for name, rec in files.items():
        path = entry / name
        try:
            size = path.stat().st_size
            if size != int(rec["size"]):
                return f"{name} is {size} bytes, meta.json says {rec['size']} (truncated?)"
            if sha256_file(path) != str(rec["sha256"]):
                return f"{name}: checksum does not match meta.json"
        except OSError as exc:
            return f"{name} is unreadable ({exc.strerror or exc})"
    return None


def touch(entry: Path) -> None:
    """Mark an entry used now (the LRU order of eviction); silent on a read-only cache."""
    try:
        os.utime(entry / META_NAME)
    except OSError:
        pass


# --------------------------------------------------------------------------- building


@contextmanager
def build_dir(root: Path, key: str) -> Iterator[Path]:
    """A fresh ``tmp/<name>/`` whose lock this process holds until the block ends.

    The lock is taken before the directory exists, so a sweeper never sees a live build
    directory unlocked; the directory (if not published) goes before the lock is dropped.
    """
    tmp = root / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    name = f"{key[:16]}-{secrets.token_hex(6)}"
    lock = tmp / f"{name}.lock"
    fd = locks.acquire(lock)
    work = tmp / name
    try:
        work.mkdir()
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)
        locks.release(fd, unlink=lock)


def write_meta(work: Path, record: dict, keep: list[str]) -> None:
    """Write meta.json describing `keep` (files in `work`) and delete every other file."""
    for path in work.iterdir():
        if path.name not in keep:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
    record = {**record, "files": {name: _file_record(work / name) for name in keep}}
    text = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    (work / META_NAME).write_text(text, encoding="utf-8")


def publish(work: Path, entry: Path) -> None:
    """Rename the finished build directory into place (caller holds the key lock)."""
    for _ in range(10):
        try:
            os.rename(work, entry)
            return
        except FileNotFoundError:  # the shard was removed by a concurrent clear
            entry.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
            remove_tree(entry)  # left by a process that did not hold the lock
    os.rename(work, entry)


def remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


# --------------------------------------------------------------------------- sweeping


def sweep_builds(root: Path) -> int:
    """Remove the build directories of dead builders; return how many. Live ones stay."""
    tmp = root / "tmp"
    try:
        names = os.listdir(tmp)
    except OSError:
        return 0
    removed = 0
    cutoff = time.time() - LEGACY_BUILD_S
    for name in names:
        path = tmp / name
        if name.endswith(".lock"):
            fd = locks.try_acquire(path, create=False)
            if fd is not None:  # its builder is gone
                remove_tree(tmp / name[: -len(".lock")])
                locks.release(fd, unlink=path)
                removed += 1
        elif not (tmp / f"{name}.lock").exists():
            try:
                if path.stat().st_mtime < cutoff:
                    remove_tree(path)
                    removed += 1
            except OSError:
                pass
    return removed


def entries(root: Path) -> list[Path]:
    """Every entry directory under `root` (published or half-published)."""
    found = []
    try:
        shards = [s for s in os.scandir(root) if len(s.name) == 2 and s.is_dir()]
    except OSError:
        return []
    for shard in shards:
        try:
            found += [Path(e.path) for e in os.scandir(shard.path) if _is_key(e.name, shard.name)]
        except OSError:
            pass
    return sorted(found)


def _is_key(name: str, shard: str) -> bool:
    return len(name) == 64 and name.startswith(shard) and all(c in "0123456789abcdef" for c in name)


def tree_bytes(path: Path) -> int:
    total = 0
    for dirpath, _, files in os.walk(path):
        for f in files:
            try:
                total += os.stat(os.path.join(dirpath, f)).st_size
            except OSError:
                pass
    return total


def remove_entry_if_idle(root: Path, entry: Path) -> bool:
    """Remove `entry` unless its key lock is held (a build or a load in flight)."""
    lock = lock_path(root, entry.name)
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        fd = locks.try_acquire(lock)
    except OSError:
        return False
    if fd is None:
        return False
    try:
        remove_tree(entry)
    finally:
        locks.release(fd, unlink=lock)
    return True


def remove_idle_locks(root: Path) -> None:
    """Remove the lock files nobody holds (held ones belong to builds or loads in flight)."""
    try:
        names = os.listdir(root / "locks")
    except OSError:
        return
    for name in names:
        if name.endswith(".lock"):
            path = root / "locks" / name
            fd = locks.try_acquire(path, create=False)
            if fd is not None:
                locks.release(fd, unlink=path)


def evict(root: Path, max_bytes: int, keep: str) -> int:
    """Remove least-recently-used idle entries until `root` holds at most `max_bytes`."""
    sized = []
    for entry in entries(root):
        try:
            used = (entry / META_NAME).stat().st_mtime
        except OSError:
            used = 0.0  # half-published or corrupt: first to go
        sized.append((used, tree_bytes(entry), entry))
    total = sum(size for _, size, _ in sized)
    removed = 0
    for _, size, entry in sorted(sized, key=lambda t: t[0]):
        if total <= max_bytes:
            break
        if entry.name != keep and remove_entry_if_idle(root, entry):
            total -= size
            removed += 1
    return removed


__all__ = [
    "META_FORMAT",
    "META_NAME",
    "STORAGE_ERRNOS",
    "build_dir",
    "check_entry",
    "entries",
    "entry_path",
    "evict",
    "lock_path",
    "publish",
    "remove_entry_if_idle",
    "remove_idle_locks",
    "sweep_builds",
    "touch",
    "tree_bytes",
    "write_meta",
]
