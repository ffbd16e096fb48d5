"""The persistent compile cache, exercised with a tiny C++ library built by the system compiler.

Cross-process behaviour runs in spawned interpreters (`subprocess.run([sys.executable, ...])`,
never fork: the OpenMP runtime hangs forked children), each with its own TRACEJIT_CACHE_DIR.
Builds are counted through a marker file the build callback appends to.
"""

from __future__ import annotations

import ctypes
import gc
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import platformdirs
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tracejit as tj
from tracejit import cache
from tracejit.cache import keys
from tracejit.config import Config
from tracejit.errors import CacheError, CompileError

CXX = shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")
needs_cxx = pytest.mark.skipif(CXX is None, reason="no C++ compiler (g++, c++, clang++) on PATH")

# answer(20) == 41 is read off this source, not computed by tracejit.
SOURCE = 'extern "C" int answer(int x) { return 2 * x + 1; }\n'
PARTS = {"schedule": "k0: answer", "backend": "test", "flags": ["-shared", "-fPIC"]}

CHILD = r"""
import ctypes, json, os, subprocess, sys, time
import tracejit as tj
from tracejit import cache
from tracejit.cache import keys

cfg = json.loads(sys.argv[1])

def build(src, lib):
    with open(cfg["marker"], "a") as f:
        f.write(f"{os.getpid()}\n")
    time.sleep(cfg.get("build_delay", 0.0))
    subprocess.run([cfg["cxx"], "-shared", "-fPIC", "-x", "c++", src, "-o", lib], check=True)

if cfg.get("go"):
    open(cfg["ready"] + str(os.getpid()), "w").close()
    while not os.path.exists(cfg["go"]):
        time.sleep(0.005)
path = cache.get_or_build(cfg["parts"], cfg["source"], build, meta={"inputs": [["f32", [4]]]})
value = ctypes.CDLL(path).answer(20)
print(json.dumps({"path": path, "value": value, **tj.cache_info()}))
"""


def _env(cache_dir: Path, **extra: str) -> dict:
    env = dict(os.environ, TRACEJIT_CACHE_DIR=str(cache_dir), **extra)
    env.pop("TRACEJIT_LOG_COMPILES", None)
    return env


def _config(tmp_path: Path, **extra) -> str:
    cfg = {
        "cxx": CXX,
        "marker": str(tmp_path / "builds.txt"),
        "parts": PARTS,
        "source": SOURCE,
    }
    cfg.update(extra)
    return json.dumps(cfg)


def _spawn(tmp_path: Path, **extra) -> tuple[dict, str]:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, _config(tmp_path, **extra)],
        env=_env(tmp_path / "cache"),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def _builds(tmp_path: Path) -> int:
    marker = tmp_path / "builds.txt"
    return len(marker.read_text().splitlines()) if marker.exists() else 0


def _entry_dirs(cache_dir: Path) -> list[Path]:
    return sorted(p for p in cache_dir.glob("??/*") if p.is_dir())


def _files_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


# --------------------------------------------------------------------------- across processes


@needs_cxx
def test_second_fresh_process_compiles_nothing(tmp_path):
    first, _ = _spawn(tmp_path)
    second, _ = _spawn(tmp_path)
    assert first["value"] == second["value"] == 41
    assert (first["misses"], first["hits"]) == (1, 0)
    assert (second["misses"], second["hits"]) == (0, 1)
    assert second["path"] == first["path"]
    assert _builds(tmp_path) == 1
    entry = Path(first["path"]).parent
    assert sorted(p.name for p in entry.iterdir()) == ["lib.so", "meta.json", "source.cpp"]
    assert (entry / "source.cpp").read_text() == SOURCE
    meta = json.loads((entry / "meta.json").read_text())
    lib_bytes = (entry / "lib.so").read_bytes()
    assert meta["files"]["lib.so"]["size"] == len(lib_bytes)
    assert meta["files"]["lib.so"]["sha256"] == hashlib.sha256(lib_bytes).hexdigest()
    assert meta["files"]["source.cpp"]["size"] == len(SOURCE)
    assert meta["parts"] == PARTS
    assert meta["meta"] == {"inputs": [["f32", [4]]]}
    assert meta["tracejit_version"] == tj.__version__
    assert meta["compile_seconds"] > 0


@needs_cxx
def test_four_racing_processes_build_once(tmp_path):
    ready, go = tmp_path / "ready-", tmp_path / "go"
    cfg = _config(tmp_path, ready=str(ready), go=str(go), build_delay=0.3)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, cfg],
            env=_env(tmp_path / "cache"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    deadline = time.monotonic() + 60
    while len(list(tmp_path.glob("ready-*"))) < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    go.touch()  # release all four at once so they miss together
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert [r["value"] for r in results] == [41] * 4
    assert len({r["path"] for r in results}) == 1
    assert sum(r["misses"] for r in results) == 1
    assert sum(r["hits"] for r in results) == 3
    assert _builds(tmp_path) == 1
    assert len(_entry_dirs(tmp_path / "cache")) == 1
    assert list((tmp_path / "cache" / "tmp").iterdir()) == []


@needs_cxx
@pytest.mark.parametrize("damage", ["truncate_library", "garbage_meta"])
def test_damaged_entry_is_reported_once_and_rebuilt(tmp_path, damage):
    first, _ = _spawn(tmp_path)
    lib = Path(first["path"])
    if damage == "truncate_library":
        os.truncate(lib, lib.stat().st_size // 2)
    else:
        (lib.parent / "meta.json").write_text('{"format": 1, "key": "trunc')
    second, stderr = _spawn(tmp_path)
    assert second["value"] == 41
    assert (second["misses"], second["hits"]) == (1, 0)
    assert _builds(tmp_path) == 2
    assert stderr.count("CacheCorruptionWarning") == 1, stderr
    assert str(lib.parent) in stderr
    third, stderr = _spawn(tmp_path)  # the rebuilt entry is trusted again
    assert (third["misses"], third["hits"]) == (0, 1)
    assert "CacheCorruptionWarning" not in stderr


CHILD_KEY = r"""
import json, sys
from tracejit.cache import cache_key
parts = json.loads(sys.argv[1])
if sys.argv[2] == "reversed":
    parts = dict(reversed(list(parts.items())))
print(cache_key(parts))
"""


def test_key_identical_across_fresh_processes(tmp_path):
    parts = {"schedule": "k0 = add a b", "backend": "cpu", "flags": ["-O3"], "n": 3, "x": 0.5}
    keys = []
    for seed, order in (("1", "forward"), ("987", "reversed")):
        proc = subprocess.run(
            [sys.executable, "-c", CHILD_KEY, json.dumps(parts), order],
            env=_env(tmp_path / "cache", PYTHONHASHSEED=seed),
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
        keys.append(proc.stdout.strip())
    # The documented definition: sha256 of JSON with sorted keys and no whitespace.
    spec = json.dumps(parts, sort_keys=True, separators=(",", ":"))
    assert keys == [hashlib.sha256(spec.encode()).hexdigest()] * 2
    assert cache.cache_key(parts) == keys[0]


@needs_cxx
def test_cli_info_and_clear(tmp_path):
    first, _ = _spawn(tmp_path)
    cache_dir = tmp_path / "cache"

    def cli(*args: str) -> str:
        proc = subprocess.run(
            [sys.executable, "-m", "tracejit", "cache", *args],
            env=_env(cache_dir),
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    info = json.loads(cli("info", "--json"))
    assert info["dir"] == str(cache_dir)
    assert info["entries"] == 1
    assert info["bytes"] == _files_bytes(Path(first["path"]).parent)
    text = cli("info")
    assert str(cache_dir) in text and "entries  1" in text
    assert "removed 1 entries" in cli("clear")
    assert _entry_dirs(cache_dir) == []
    assert json.loads(cli("info", "--json"))["entries"] == 0


def test_cli_without_action_explains_usage(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "tracejit", "cache"],
        env=_env(tmp_path / "cache"),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "info" in proc.stderr and "clear" in proc.stderr


HOLD_LOCK = r"""
import sys, time
from filelock import FileLock
lock = FileLock(sys.argv[1])
lock.acquire()
print("held", flush=True)
time.sleep(60)
"""

# --------------------------------------------------------------------------- in process


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(tj.config, "cache_dir", str(tmp_path / "cache"))
    return tmp_path / "cache"


class Builder:
    """A build callback that compiles SOURCE and counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, src: str, lib: str) -> None:
        self.calls += 1
        subprocess.run([CXX, "-shared", "-fPIC", "-x", "c++", src, "-o", lib], check=True)


@needs_cxx
def test_same_size_corruption_is_detected(cache_dir):
    build = Builder()
    path = Path(cache.get_or_build(PARTS, SOURCE, build))
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.warns(cache.CacheCorruptionWarning, match="checksum"):
        assert cache.get_or_build(PARTS, SOURCE, build) == str(path)
    assert build.calls == 2


@needs_cxx
def test_half_published_entry_is_rebuilt_silently(cache_dir):
    # A process that died between moving the library in and writing meta.json.
    entry = cache.entry_dir(cache.cache_key(PARTS))
    entry.mkdir(parents=True)
    (entry / "lib.so").write_bytes(b"\x7fELF partial")
    build = Builder()
    with warnings.catch_warnings():
        warnings.simplefilter("error", cache.CacheCorruptionWarning)
        path = cache.get_or_build(PARTS, SOURCE, build)
    assert build.calls == 1
    assert Path(path).read_bytes() != b"\x7fELF partial"


@needs_cxx
def test_invalidate_then_rebuild(cache_dir):
    build = Builder()
    cache.get_or_build(PARTS, SOURCE, build)
    key = cache.cache_key(PARTS)
    with pytest.warns(cache.CacheCorruptionWarning, match="undefined symbol"):
        cache.invalidate(key, reason="dlopen: undefined symbol foo")
    assert not cache.entry_dir(key).exists()
    assert tj.cache_info()["entries"] == 0
    cache.get_or_build(PARTS, SOURCE, build)
    assert build.calls == 2


def test_failed_build_leaves_no_entry(cache_dir):
    def failing(src: str, lib: str) -> None:
        Path(lib).write_bytes(b"half")
        raise CompileError("g++ said no")

    with pytest.raises(CompileError, match="said no"):
        cache.get_or_build(PARTS, SOURCE, failing)
    assert _entry_dirs(cache_dir) == []
    assert list((cache_dir / "tmp").iterdir()) == []

    with pytest.raises(CacheError, match="without writing a library"):
        cache.get_or_build(PARTS, SOURCE, lambda src, lib: None)
    assert _entry_dirs(cache_dir) == []


def test_builds_left_by_killed_processes_are_swept(cache_dir):
    old, fresh = cache_dir / "tmp" / "old-build", cache_dir / "tmp" / "fresh-build"
    old.mkdir(parents=True)
    fresh.mkdir()
    two_days_ago = time.time() - 2 * 24 * 3600
    os.utime(old, (two_days_ago, two_days_ago))
    cache.get_or_build(PARTS, SOURCE, lambda src, lib: Path(lib).write_bytes(b"lib"))
    assert not old.exists()
    assert fresh.exists()  # may be a build in flight in another process


def test_lock_held_too_long_says_which_file(cache_dir, monkeypatch):
    from filelock import FileLock

    monkeypatch.setattr(cache, "LOCK_TIMEOUT_S", 0.2)
    lock_path = cache_dir / "locks" / f"{cache.cache_key(PARTS)}.lock"
    lock_path.parent.mkdir(parents=True)
    holder = subprocess.Popen(  # another process holding the lock, as a compile would
        [sys.executable, "-c", HOLD_LOCK, str(lock_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(CacheError, match=str(lock_path)):
            cache.get_or_build(PARTS, SOURCE, lambda src, lib: Path(lib).write_bytes(b"x"))
    finally:
        holder.kill()
        holder.wait()
    with FileLock(str(lock_path), timeout=5):  # released when its holder died
        pass


@needs_cxx
def test_unusable_cache_dir_falls_back_once_and_works(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("not a directory")
    monkeypatch.setattr(tj.config, "cache_dir", str(tmp_path / "file" / "cache"))
    build = Builder()
    with pytest.warns(cache.CacheFallbackWarning, match="TRACEJIT_CACHE_DIR") as caught:
        path = cache.get_or_build(PARTS, SOURCE, build)
    assert len(caught) == 1
    assert ctypes.CDLL(path).answer(20) == 41
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one warning per process, then silence
        assert cache.get_or_build(PARTS, SOURCE, build) == path
    assert build.calls == 1


@needs_cxx
def test_hits_and_misses_are_logged_with_the_key(cache_dir, monkeypatch, caplog):
    monkeypatch.setattr(tj.config, "log_compiles", True)
    key = cache.cache_key(PARTS)
    with caplog.at_level("INFO", logger="tracejit"):
        cache.get_or_build(PARTS, SOURCE, Builder())
        cache.get_or_build(PARTS, SOURCE, Builder())
    messages = [r.getMessage() for r in caplog.records]
    assert any("miss" in m and key in m for m in messages)
    assert any("hit" in m and key in m for m in messages)


@needs_cxx
def test_cuda_suffix_keeps_a_cu_source(cache_dir):
    def copy(src: str, lib: str) -> None:
        shutil.copy(src, lib)

    path = Path(cache.get_or_build(PARTS, "__global__ void k() {}", copy, suffix=".cubin"))
    assert path.name == "lib.cubin"
    assert (path.parent / "source.cu").read_text() == "__global__ void k() {}"


# --------------------------------------------------------------------------- keys and helpers

json_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=8)


@given(st.dictionaries(st.text(max_size=6), json_scalars, max_size=6))
def test_key_ignores_dict_order(parts):
    assert cache.cache_key(parts) == cache.cache_key(dict(reversed(list(parts.items()))))


def test_key_separates_different_parts():
    base = {"backend": "cpu", "flags": ["-O3"]}
    keys = {
        cache.cache_key(base),
        cache.cache_key({**base, "backend": "cuda"}),
        cache.cache_key({**base, "flags": ["-O2"]}),
        cache.cache_key({**base, "flags": "-O3"}),
    }
    assert len(keys) == 4
    assert cache.cache_key({"f": (1, 2)}) == cache.cache_key({"f": [1, 2]})


def test_key_rejects_values_without_a_stable_text():
    with pytest.raises(TypeError, match="convert it to a string"):
        cache.cache_key({"x": object()})


def test_source_hash_follows_contents_not_order(tmp_path):
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("x = 1\n")
    b.write_text("y = 2\n")
    before = cache.source_hash([a, b])
    assert cache.source_hash([b, a]) == before
    assert cache.source_hash(cache) == cache.source_hash(cache.__file__)
    b.write_text("y = 3\n")
    assert cache.source_hash([a, b]) != before


@needs_cxx
def test_compiler_identity_runs_the_compiler_once(monkeypatch):
    keys._identities.pop(CXX, None)
    real_run, calls = subprocess.run, []

    def counting_run(*args, **kwargs):
        calls.append(args)
        return real_run(*args, **kwargs)

    monkeypatch.setattr(keys.subprocess, "run", counting_run)
    first = cache.compiler_identity(CXX)
    assert cache.compiler_identity(CXX) == first
    assert len(calls) == 1
    version = real_run([CXX, "--version"], capture_output=True, text=True).stdout
    assert version.splitlines()[0] in first


def test_missing_compiler_is_a_compile_error():
    with pytest.raises(CompileError, match="not found"):
        cache.compiler_identity("no-such-compiler-xyz++")


def test_cache_dir_default_and_env_precedence(monkeypatch, tmp_path):
    monkeypatch.delenv("TRACEJIT_CACHE_DIR", raising=False)
    assert Config().cache_dir == platformdirs.user_cache_dir("tracejit", appauthor=False)
    monkeypatch.setenv("TRACEJIT_CACHE_DIR", str(tmp_path))
    assert Config().cache_dir == str(tmp_path)


def test_cache_info_of_a_missing_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(tj.config, "cache_dir", str(tmp_path / "never-created"))
    info = tj.cache_info()
    assert (info["dir"], info["entries"], info["bytes"]) == (str(tmp_path / "never-created"), 0, 0)
    assert cache.clear_cache()["entries"] == 0


def test_compiler_identity_accepts_flags_in_cxx():
    """CXX="g++ -fsanitize=address" is a valid compiler command; its flags key the cache."""
    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        pytest.skip("no C++ compiler on PATH")
    plain = keys._query_compiler(cxx)
    flagged = keys._query_compiler(f"{cxx} -O1")
    assert flagged.splitlines()[0].endswith("-O1")
    assert plain.splitlines()[1:] == flagged.splitlines()[1:]
    assert cache.cache_key({"c": plain}) != cache.cache_key({"c": flagged})


@needs_cxx
def test_library_of_a_dead_function_is_unloaded(cache_dir):
    # Once the last reference to a jitted function is gone, its executor dlcloses the
    # library (the OpenMP runtime stays: see test_backend_cpu); a process that jits many
    # short-lived functions does not accumulate mapped libraries.
    if not os.path.exists("/proc/self/maps"):
        pytest.skip("needs /proc/self/maps (Linux) to see which libraries are mapped")

    def mapped() -> set[str]:
        with open("/proc/self/maps") as maps:
            return {line.split()[-1] for line in maps if str(cache_dir) in line}

    f = tj.jit(lambda x: x * 2.0 + 7.0)
    assert f(np.arange(3.0)).tolist() == [7.0, 9.0, 11.0]
    assert len(mapped()) == 1
    del f
    gc.collect()
    assert mapped() == set()
