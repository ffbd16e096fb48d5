"""Cache faults: whatever happens to the cache directory, every call returns the right answer.

Random bytes in every cache file, `cache clear` while other processes build, a read-only and
a full cache directory, `kill -9` mid-compile, 8 concurrent processes. One tiny function,
``x * 2.0 + offset`` on ``arange(4.0)``, whose answer NumPy gives exactly. Other processes are
spawned interpreters (never fork: the OpenMP runtime hangs forked children). A real small
filesystem (tmpfs in a private mount namespace, `unshare -rm`) is used where the machine
allows it; elsewhere the child fakes the filesystem's errors (EROFS, ENOSPC) for paths in
its cache directory.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import tracejit as tj
from tracejit import cache
from tracejit.backend_cpu import compiler

CXX = shutil.which("g++") or shutil.which("c++")
pytestmark = pytest.mark.skipif(CXX is None, reason="no C++ compiler (g++, c++) on PATH")
ROOT = Path(__file__).resolve().parents[2]
X = np.arange(4.0)


def expected(offset: float, scale: float = 2.0) -> list[float]:
    return (X * scale + offset).tolist()


def tiny(offset: float = 1.0):
    """A fresh jitted function (nothing cached in memory): the disk cache is all it has."""
    return tj.jit(lambda x: x * 2.0 + offset)


# --------------------------------------------------------------------------- in this process


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(tj.config, "cache_dir", str(tmp_path / "cache"))
    compiler.identity.cache_clear()
    compiler.extra_libs.cache_clear()
    yield tmp_path / "cache"
    compiler.identity.cache_clear()
    compiler.extra_libs.cache_clear()


def _entry_files(cache_dir: Path) -> dict[str, Path]:
    (entry,) = [p for p in cache_dir.glob("??/*") if p.is_dir()]
    return {p.name: p for p in entry.iterdir()}


ENTRY_FILES = ["meta.json", "lib.so", "source.cpp", "executable.pkl"]


@pytest.mark.parametrize("name", ENTRY_FILES)
def test_random_bytes_in_an_entry_file_rebuild_once(cache_dir, name):
    assert tiny()(X).tolist() == expected(1.0)
    path = _entry_files(cache_dir)[name]
    rng = np.random.default_rng(len(name))
    path.write_bytes(rng.integers(0, 256, path.stat().st_size or 64, dtype=np.uint8).tobytes())
    before = cache.cache_info()["misses"]
    with pytest.warns(cache.CacheCorruptionWarning, match="removed it and rebuilding"):
        assert tiny()(X).tolist() == expected(1.0)
    assert cache.cache_info()["misses"] == before + 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # healed: trusted again, silently
        assert tiny()(X).tolist() == expected(1.0)
    assert cache.cache_info()["misses"] == before + 1


def test_random_bytes_in_toolchain_record_lock_and_tmp_files(cache_dir):
    assert tiny()(X).tolist() == expected(1.0)
    rng = np.random.default_rng(1)
    junk = [
        *(cache_dir / "toolchain").iterdir(),
        *(cache_dir / "locks").iterdir(),
        cache_dir / "tmp" / "stray",
        cache_dir / "tmp" / "stray.lock",
    ]
    for path in junk:
        path.write_bytes(rng.integers(0, 256, 300, dtype=np.uint8).tobytes())
    compiler.identity.cache_clear()  # a fresh process's view: facts come from the record
    compiler.extra_libs.cache_clear()
    assert tiny()(X).tolist() == expected(1.0)  # still a hit: the key did not change
    assert tiny(5.0)(X).tolist() == expected(5.0)  # a build sweeps the dead build's files
    assert not (cache_dir / "tmp" / "stray.lock").exists()


def test_bad_toolchain_record_heals_and_clear_removes_it(cache_dir):
    assert tiny()(X).tolist() == expected(1.0)
    # one compiler record (a package-hash memo may sit beside it, written by whichever test
    # first hashed the package in this process)
    (record,) = (cache_dir / "toolchain").glob("*.json")
    # values the probes cannot produce: a non-text identity, a library that does not exist
    record.write_text(json.dumps({"identity": 7, "extra_libs": ["-lno_such_library"]}))
    compiler.identity.cache_clear()
    compiler.extra_libs.cache_clear()
    assert tiny(3.0)(X).tolist() == expected(3.0)
    healed = json.loads(record.read_text())
    assert isinstance(healed["identity"], str) and "-lno_such_library" not in healed["extra_libs"]
    removed = cache.clear_cache()
    assert removed["entries"] == 2 and removed["in_use"] == 0
    assert sorted(p.name for p in cache_dir.iterdir()) == []


def test_lru_eviction_keeps_the_cache_under_its_cap(cache_dir, monkeypatch):
    assert tiny(1.0)(X).tolist() == expected(1.0)
    one = cache.cache_info()["bytes"]
    monkeypatch.setattr(tj.config, "cache_max_bytes", int(2.5 * one))
    assert tiny(2.0)(X).tolist() == expected(2.0)
    time.sleep(0.02)
    assert tiny(1.0)(X).tolist() == expected(1.0)  # a hit: 1.0 is now the most recent
    assert tiny(3.0)(X).tolist() == expected(3.0)  # a third entry: over the cap
    info = cache.cache_info()
    assert info["entries"] == 2 and info["bytes"] <= tj.config.cache_max_bytes
    misses = info["misses"]
    assert tiny(1.0)(X).tolist() == expected(1.0)  # kept (recently used)
    assert cache.cache_info()["misses"] == misses
    assert tiny(2.0)(X).tolist() == expected(2.0)  # evicted: compiled again
    assert cache.cache_info()["misses"] == misses + 1


# --------------------------------------------------------------------------- other processes

CHILD = r"""
import json, os, sys, warnings

def fake_filesystem_errors(name, root):
    # Stand-in for a read-only (EROFS) or full (ENOSPC) filesystem under `root`.
    import builtins, errno, io
    code, root = getattr(errno, name), os.path.realpath(root)
    real_open, real_mkdir, real_io_open = os.open, os.mkdir, io.open

    def blocked(path):
        if not isinstance(path, (str, bytes, os.PathLike)):
            return False
        path = os.path.realpath(os.fsdecode(path))
        return path == root or path.startswith(root + os.sep)

    def fail(path):
        raise OSError(code, os.strerror(code), os.fsdecode(path))

    def os_open(path, flags, *a, **k):
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT) and blocked(path):
            fail(path)
        return real_open(path, flags, *a, **k)

    def mkdir(path, *a, **k):
        if blocked(path):
            fail(path)
        return real_mkdir(path, *a, **k)

    def open_(file, mode="r", *a, **k):
        if any(c in mode for c in "wax+") and blocked(file):
            fail(file)
        return real_io_open(file, mode, *a, **k)

    os.open, os.mkdir, io.open, builtins.open = os_open, mkdir, open_, open_

if os.environ.get("TJ_TEST_FAKE_ERRNO"):
    fake_filesystem_errors(os.environ["TJ_TEST_FAKE_ERRNO"], os.environ["TRACEJIT_CACHE_DIR"])

import numpy as np
import tracejit as tj

offset = float(sys.argv[1])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out = tj.jit(lambda x: x * 2.0 + offset)(np.arange(4.0))
    out3 = tj.jit(lambda x: x * 3.0 + offset)(np.arange(4.0))
info = tj.cache_info()
print(json.dumps({"out": out.tolist(), "out3": out3.tolist(), "hits": info["hits"],
                  "misses": info["misses"], "warnings": [w.category.__name__ for w in caught]}))
"""

# A compiler that is g++, slowed down (or stopped) on the real compiles, not the probes.
SLOW_CXX = """#!/bin/sh
case "$*" in
  *source.cpp*)
    [ -n "$TJ_TEST_STARTED" ] && touch "$TJ_TEST_STARTED"
    [ -n "$TJ_TEST_BUILD_DELAY" ] && sleep "$TJ_TEST_BUILD_DELAY" ;;
esac
exec {cxx} "$@"
"""


def _env(cache_dir: Path, **extra) -> dict:
    env = dict(os.environ, TRACEJIT_CACHE_DIR=str(cache_dir), PYTHONPATH=str(ROOT), **extra)
    env.pop("TRACEJIT_LOG_COMPILES", None)
    return env


def _slow_cxx(tmp_path: Path) -> str:
    path = tmp_path / "slow-g++"
    path.write_text(SLOW_CXX.format(cxx=CXX))
    path.chmod(0o755)
    return str(path)


def _start(cache_dir: Path, offset: float, **env) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(offset)],
        env=_env(cache_dir, **env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # kill -9 of its process group takes the compiler too
    )


def _result(proc: subprocess.Popen, offset: float) -> dict:
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, err[-3000:]
    result = json.loads(out.strip().splitlines()[-1])
    assert result["out"] == expected(offset) and result["out3"] == expected(offset, 3.0), result
    return result


def test_eight_processes_with_cache_clears_during_their_builds(tmp_path):
    cache_dir = tmp_path / "cache"
    cxx = _slow_cxx(tmp_path)
    # 8 processes, 4 functions (two processes per key), builds slowed to 0.5 s, while this
    # process clears the cache in a loop: every build in flight must finish correctly.
    procs = [_start(cache_dir, float(i % 4), CXX=cxx, TJ_TEST_BUILD_DELAY="0.5") for i in range(8)]
    clears = 0
    while any(p.poll() is None for p in procs):
        removed = _clear(cache_dir)
        clears += removed["entries"] > 0 or removed["in_use"] > 0
        time.sleep(0.05)
    results = [_result(p, float(i % 4)) for i, p in enumerate(procs)]
    assert clears > 0, "no clear ran while an entry existed or a build was in flight"
    assert all(r["warnings"] == [] for r in results), results


def _clear(cache_dir: Path) -> dict:
    saved = tj.config.cache_dir
    tj.config.cache_dir = str(cache_dir)
    try:
        return cache.clear_cache()
    finally:
        tj.config.cache_dir = saved


def test_kill_9_mid_compile_leaves_nothing_that_breaks_the_next_process(tmp_path):
    cache_dir, started = tmp_path / "cache", tmp_path / "started"
    cxx = _slow_cxx(tmp_path)
    victim = _start(cache_dir, 1.0, CXX=cxx, TJ_TEST_STARTED=str(started), TJ_TEST_BUILD_DELAY="60")
    deadline = time.monotonic() + 120
    while not started.exists() and victim.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert started.exists(), victim.communicate()[1][-2000:]
    os.killpg(victim.pid, signal.SIGKILL)  # the interpreter and its compiler, mid-compile
    victim.wait()
    assert [p for p in (cache_dir / "tmp").iterdir() if p.is_dir()]  # it left its build
    second = _result(_start(cache_dir, 1.0, CXX=cxx), 1.0)
    assert second["misses"] == 2 and second["warnings"] == []
    assert list((cache_dir / "tmp").iterdir()) == []  # the dead build was swept


def _can_mount_tmpfs(tmp_path: Path) -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = tmp_path / "probe"
    probe.mkdir()
    cmd = ["unshare", "-rm", "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs {probe}"]
    return subprocess.run(cmd, capture_output=True, check=False).returncode == 0


def _in_small_filesystem(tmp_path: Path, runs: list[tuple[float, bool]], fault: str, fake: str):
    """Run one child per (offset, faulty) against a cache on a 1 MiB tmpfs; before the first
    faulty run, the shell `fault` ($D is the mount) breaks it. Where no tmpfs can be mounted,
    faulty runs fake the errno `fake` instead."""
    cache_dir = tmp_path / "small"
    cache_dir.mkdir()
    real = _can_mount_tmpfs(tmp_path)
    steps = [f"D={cache_dir}", "mount -t tmpfs -o size=1m tmpfs $D"] if real else []
    broken = False
    for offset, faulty in runs:
        child = shlex.join([sys.executable, "-c", CHILD, str(offset)])
        if faulty and real and not broken:
            steps.append(fault)
            broken = True
        steps.append(f"TJ_TEST_FAKE_ERRNO={fake} {child}" if faulty and not real else child)
    cmd = ["unshare", "-rm"] if real else []
    done = subprocess.run(
        [*cmd, "sh", "-ec", "\n".join(steps)],
        env=_env(cache_dir),
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    for (offset, _), result in zip(runs, results, strict=True):
        assert result["out"] == expected(offset) and result["out3"] == expected(offset, 3.0)
    return results, done.stderr


def test_full_cache_filesystem_warns_once_and_works(tmp_path):
    fill = "dd if=/dev/zero of=$D/filler bs=4k 2>/dev/null || true"  # fill the tmpfs up
    (result,), stderr = _in_small_filesystem(tmp_path, [(1.0, True)], fill, fake="ENOSPC")
    assert result["warnings"] == ["CacheFallbackWarning"], stderr  # one, for two compiles
    assert result["misses"] == 2


def test_read_only_cache_dir_still_hits_and_falls_back_once_for_new_code(tmp_path):
    runs = [(1.0, False), (1.0, True), (4.0, True)]  # fill it, then read-only: hit, then miss
    ro = "mount -o remount,ro $D"
    (fill, hit, miss), stderr = _in_small_filesystem(tmp_path, runs, ro, fake="EROFS")
    assert (fill["misses"], fill["warnings"]) == (2, [])
    assert (hit["hits"], hit["misses"], hit["warnings"]) == (2, 0, []), stderr
    assert miss["warnings"] == ["CacheFallbackWarning"], stderr
    assert miss["misses"] == 2
