"""Facts about a compiler (its identity, which libraries it links) remembered on disk.

Records live in ``<cache_dir>/toolchain/<digest>.json``, one per compiler binary, flags and
CPU: keyed by the compiler command, the resolved binary's path, size and mtime (updating
the compiler re-probes), the flags and `cpu_identity` (a cache shared between machines
never hands one machine's facts to another). A record is only a shortcut: one that is
unreadable, not JSON, or holds a value the probe could not have produced (checked by the
caller's `valid`) is probed again and rewritten, so a bad record heals on the next call.
`cache clear` removes the directory.

>>> remembered("no-such-compiler-xyz++", (), "answer", lambda: 42, lambda v: v == 42)
42
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
from collections.abc import Callable, Sequence

from tracejit.cache.keys import cpu_identity, write_atomic


def record_path(cxx: str, flags: Sequence[str]) -> str | None:
    """Where facts about `cxx` are stored, or None when it cannot be resolved."""
    from tracejit.cache import cache_root

    argv = shlex.split(cxx) or [cxx]
    resolved = shutil.which(argv[0])
    if resolved is None:
        return None
    real = os.path.realpath(resolved)
    try:
        st = os.stat(real)
    except OSError:
        return None
    key = json.dumps([cxx, real, st.st_size, st.st_mtime_ns, list(flags), cpu_identity()])
    digest = hashlib.sha256(key.encode()).hexdigest()[:32]
    return os.path.join(cache_root(), "toolchain", f"{digest}.json")


def _read(path: str) -> dict:
    try:
        with open(path, "rb") as f:
            facts = json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError):
        return {}
    return facts if isinstance(facts, dict) else {}


def remembered(
    cxx: str,
    flags: Sequence[str],
    name: str,
    compute: Callable[[], object],
    valid: Callable[[object], bool],
):
    """`compute()` for fact `name` of compiler `cxx`, through its on-disk record."""
    path = record_path(cxx, flags)
    facts = _read(path) if path is not None else {}
    if name in facts and valid(facts[name]):
        return facts[name]
    value = compute()
    if path is not None:
        write_atomic(path, json.dumps({**facts, name: value}))
    return value


__all__ = ["record_path", "remembered"]
