"""Every name of tools/api-targets.md (the team's list of what JAX and NumPy users expect),
section by section, is offered by its tracejit module, or listed below with the reason it
is not: the list is walked by tools/api_coverage.py, which the checks here also test."""

from __future__ import annotations

import sys
from pathlib import Path

import tracejit as tj

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

from api_coverage import DEFAULT, MODULES, coverage, has, stated_counts, targets

# {api-targets.md section: {name not offered: why}}
EXCEPTIONS: dict[str, dict[str, str]] = {}


def test_every_section_is_read_whole():
    text = DEFAULT.read_text()
    found = targets(text)
    assert set(found) == set(MODULES), f"sections not found: {set(MODULES) - set(found)}"
    counts = stated_counts(text)
    assert len(counts) >= 6, counts  # the module sections state their sizes
    for module, n in counts.items():
        assert len(found[module]) == n, (module, len(found[module]), n)


def test_missing_names_are_exactly_the_listed_exceptions():
    for module, (_, missing) in coverage(DEFAULT.read_text()).items():
        listed = set(EXCEPTIONS.get(module, {}))
        assert set(missing) == listed, (
            f"{module}: newly missing {sorted(set(missing) - listed)}; now offered (remove "
            f"from EXCEPTIONS): {sorted(listed - set(missing))}"
        )
    assert set(EXCEPTIONS) <= set(MODULES)
    assert all(reason for names in EXCEPTIONS.values() for reason in names.values())


def test_the_walker_reads_aliases_and_dotted_names():
    text = "## tracejit.nn (jax.nn): 3 names\n\n`relu` `make_jaxpr (here: softmax)` `x.y`\n"
    assert targets(text) == {"tracejit.nn": ["relu", "softmax", "x.y"]}
    assert stated_counts(text) == {"tracejit.nn": 3}
    assert coverage(text) == {"tracejit.nn": (["relu", "softmax"], ["x.y"])}
    assert has(tj, "debug.print") and not has(tj, "debug.no_such_name")


def test_tree_util_is_the_pytree_functions_under_jax_s_module_name():
    from tracejit import _tree_classes, _tree_def, _tree_keys, _tree_ops, pytree

    modules = (pytree, _tree_classes, _tree_def, _tree_keys, _tree_ops)
    for name in tj.tree_util.__all__:  # the pytree modules' own objects, no copies
        obj = getattr(tj.tree_util, name)
        assert any(obj is getattr(m, name, None) for m in modules)
    public = {n for n in dir(tj.tree_util) if n.isidentifier() and not n.startswith("_")}
    assert public == set(tj.tree_util.__all__)  # (pytest's rewriter may add '@py_...' names)
    tree = {"w": 1.0, "b": (2.0, None)}
    assert tj.tree_util.tree_map(lambda x: x + 1, tree) == {"w": 2.0, "b": (3.0, None)}
