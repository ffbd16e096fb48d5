"""`import tracejit` stays cheap: no optional heavy dependency, rarely used parts on first use.

Each check runs in a fresh interpreter (what is imported depends on the whole process).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

import tracejit as tj

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("mpi4py", "cupy", "scipy", "sklearn", "torch", "jax", "numba", "pandas", "matplotlib")
LAZY = ("tracejit.distributed", "tracejit.lax", "tracejit.nn", "tracejit.random")


def _fresh(code: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def test_import_loads_no_heavy_optional_module_and_no_rarely_used_part():
    loaded = _fresh(
        "import json, sys, tracejit; "
        f"print(json.dumps([m for m in {HEAVY + LAZY!r} if m in sys.modules]))"
    )
    assert loaded == []


def test_lazy_parts_are_still_attributes_and_listed():
    got = _fresh(
        "import json, tracejit as tj, tracejit.numpy as tnp, tracejit.remat, tracejit.profile; "
        "print(json.dumps({"
        "'modules': [getattr(tj, n).__name__ for n in ('distributed', 'lax', 'nn', 'random')], "
        "'tnp': tj.tnp is tnp is tj.numpy, "
        "'functions': [callable(tj.remat), callable(tj.profile), callable(tj.jit)], "
        "'dir': sorted(set(tj.__all__) - set(dir(tj))), "
        "'all': all(hasattr(tj, n) for n in tj.__all__)}))"
    )
    assert got == {
        "modules": ["tracejit.distributed", "tracejit.lax", "tracejit.nn", "tracejit.random"],
        "tnp": True,
        "functions": [True, True, True],
        "dir": [],
        "all": True,
    }


def test_unknown_attribute_is_an_attribute_error():
    got = _fresh(
        "import json, tracejit as tj\n"
        "try:\n    tj.no_such_name\nexcept AttributeError as e:\n    print(json.dumps(str(e)))"
    )
    assert "no_such_name" in got


def test_a_lazily_loaded_part_traces_and_batches_in_a_fresh_process():
    # vmap outside jit evaluates with the reference interpreter: no compiler
    got = _fresh(
        "import json, numpy as np, tracejit as tj\n"
        "body = lambda i, c: c * 2.0 + i\n"
        "f = tj.vmap(lambda x: tj.lax.fori_loop(0, 3, body, x))\n"
        "print(json.dumps(f(np.arange(4.0)).tolist()))"
    )
    x = np.arange(4.0)
    for i in range(3):
        x = x * 2.0 + i
    assert got == x.tolist()


def test_the_static_view_names_exactly_the_lazy_attributes():
    # mkdocstrings and type checkers read the TYPE_CHECKING imports; the package loads _ATTRIBUTES
    tree = ast.parse((ROOT / "tracejit" / "__init__.py").read_text())
    block = next(
        n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"
    )
    static = {a.asname or a.name: f"{n.module}.{a.name}" for n in block.body for a in n.names}
    lazy = {  # a submodule itself, or the name in its module (as tracejit._resolve reads it)
        n: m if m == f"tracejit.{n}" and n not in tj._SHADOWED else f"{m}.{n}"
        for n, m in tj._ATTRIBUTES.items()
    }
    assert static == {**lazy, "tnp": "tracejit.numpy"}
