"""The compiler facts a first call needs (identity, -lmvec probe) are stored on disk, so a
fresh process with a warm cache runs no compiler; a corrupt record is re-probed."""

from __future__ import annotations

import os
import subprocess

import pytest

import tracejit as tj
from tracejit import cache
from tracejit.backend_cpu import compiler
from tracejit.errors import TracejitError

try:
    CXX = compiler.find_compiler()
except TracejitError as exc:  # pragma: no cover - depends on the machine
    pytest.skip(f"no C++ compiler: {exc}", allow_module_level=True)


def _forget(monkeypatch):
    """A fresh process's view: no in-memory facts."""
    compiler.identity.cache_clear()
    compiler.extra_libs.cache_clear()
    monkeypatch.setattr(cache, "_identities", {})


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(tj.config, "cache_dir", str(tmp_path))
    _forget(monkeypatch)
    yield tmp_path
    compiler.identity.cache_clear()
    compiler.extra_libs.cache_clear()


def test_warm_toolchain_record_runs_no_compiler(fresh_cache, monkeypatch):
    ident, libs = compiler.identity(CXX), compiler.extra_libs(CXX)
    assert CXX.split()[0].split("/")[-1] in ident or os.path.basename(CXX) in ident
    records = list((fresh_cache / "toolchain").iterdir())
    assert len(records) == 1

    def no_compiler(*args, **kwargs):
        raise AssertionError(f"ran a subprocess: {args}")

    _forget(monkeypatch)
    monkeypatch.setattr(subprocess, "run", no_compiler)
    assert compiler.identity(CXX) == ident
    assert compiler.extra_libs(CXX) == libs


def test_corrupt_toolchain_record_is_probed_again(fresh_cache, monkeypatch):
    libs = compiler.extra_libs(CXX)
    (record,) = list((fresh_cache / "toolchain").iterdir())
    record.write_text("{not json")
    _forget(monkeypatch)
    assert compiler.extra_libs(CXX) == libs
    assert "extra_libs" in record.read_text()
