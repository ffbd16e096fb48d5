"""Advisory file locks (``flock``) that can be removed safely while other processes use them.

A lock file may be unlinked only by a process holding it exclusively. A process that opened
the file before the unlink and then acquires the lock holds a lock on a name that no longer
exists; `acquire` detects that (the path no longer names the locked inode) and retries on the
current file, so two processes never both believe they hold the lock of one path. The
kernel releases a lock when its holder dies (``kill -9`` included).

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "k.lock")
>>> held = acquire(path)
>>> try_acquire(path) is None            # taken: a second open file description waits
True
>>> release(held, unlink=path)
>>> os.path.exists(path)
False
"""

from __future__ import annotations

import errno
import fcntl
import os
import time

from tracejit.errors import CacheError

# Polling interval while waiting for a lock held by another process.
_POLL_S = 0.005


class LockTimeout(CacheError, TimeoutError):
    """The lock stayed taken for the whole timeout."""


def _same_file(fd: int, path: str) -> bool:
    try:
        current = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (current.st_ino, current.st_dev) == (mine.st_ino, mine.st_dev)


def _lock_once(path: str, op: int, create: bool) -> int | None:
    """One attempt: the fd holding `op` on the file at `path`, or None (busy or gone)."""
    flags = os.O_RDWR | (os.O_CREAT if create else 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o666)
    except FileNotFoundError:
        if create:
            raise
        return None
    try:
        fcntl.flock(fd, op | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            return None
        raise
    if _same_file(fd, path):
        return fd
    os.close(fd)  # unlinked (or replaced) while we waited: not the lock of `path` any more
    return None if not create else -1


def acquire(path: str | os.PathLike, shared: bool = False, timeout: float | None = None) -> int:
    """Wait for the lock of `path` (created if missing); returns the fd to `release`.

    Raises `LockTimeout` after `timeout` seconds (None: wait forever), OSError when the
    file cannot be created (read-only or missing directory).
    """
    path = os.fspath(path)
    op = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        fd = _lock_once(path, op, create=True)
        if fd is not None and fd >= 0:
            return fd
        if fd is None and deadline is not None and time.monotonic() >= deadline:
            raise LockTimeout(f"{path} stayed locked for {timeout:.1f} s")
        if fd is None:
            time.sleep(_POLL_S)


def try_acquire(path: str | os.PathLike, create: bool = True, shared: bool = False) -> int | None:
    """The lock of `path` if it can be had now, else None (never waits).

    Exclusive unless `shared`. With ``create=False`` a missing file is also None.
    """
    path = os.fspath(path)
    op = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
    while True:
        fd = _lock_once(path, op, create)
        if fd != -1:
            return fd


def release(fd: int, unlink: str | os.PathLike | None = None) -> None:
    """Release a lock; with `unlink` (its path, held exclusively) remove the file first."""
    try:
        if unlink is not None:
            try:
                os.unlink(unlink)
            except FileNotFoundError:
                pass
    finally:
        os.close(fd)  # closing the only descriptor releases the flock


__all__ = ["LockTimeout", "acquire", "release", "try_acquire"]
