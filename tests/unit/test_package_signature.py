"""The stat signature that guards tracejit's remembered package hash (cache/keys.py): any
edit, addition or removal of a Python source (or the runtime extension) changes it, so a
stale package hash (hence a stale cache key) is never reused; bytecode does not."""

from __future__ import annotations

import os

from tracejit.cache.keys import _stat_signature


def _tree(root):
    (root / "sub" / "__pycache__").mkdir(parents=True)
    (root / "a.py").write_text("x = 1\n")
    (root / "sub" / "b.py").write_text("y = 2\n")
    (root / "_core.so").write_bytes(b"\0" * 8)
    (root / "notes.txt").write_text("not a source\n")
    return str(root)


def test_every_source_change_changes_the_signature(tmp_path):
    root = _tree(tmp_path)
    base = _stat_signature(root)
    assert _stat_signature(root) == base
    (tmp_path / "sub" / "__pycache__" / "b.cpython-311.pyc").write_bytes(b"bytecode")
    (tmp_path / "notes.txt").write_text("edited, but not a source\n")
    assert _stat_signature(root) == base
    (tmp_path / "sub" / "b.py").write_text("y = 3\n")  # same size, new mtime
    st = os.stat(tmp_path / "a.py")
    os.utime(tmp_path / "sub" / "b.py", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    edited = _stat_signature(root)
    assert edited != base
    (tmp_path / "sub" / "c.py").write_text("")
    added = _stat_signature(root)
    assert added not in (base, edited)
    (tmp_path / "_core.so").write_bytes(b"\0" * 9)
    assert _stat_signature(root) not in (base, edited, added)
