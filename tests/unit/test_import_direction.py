"""Imports point down the pipeline (docs/architecture.md), read from the source with `ast`.

- `tracejit.ir` imports no tracer and no backend;
- each backend imports no tracer and not the other backend;
- `tracejit.tracer` does not import `tracejit.numpy` (tnp installs itself on `Tracer`).

Every import counts, including one inside a function. What a module imports at module level
counts transitively too (a module importing `tracejit.debug`, which imports the tracer at
module level, imports the tracer); an import inside a function is deferred, so it is only
checked in the module that writes it. `from tracejit import x` is an import of `tracejit.x`
(the package's own `__init__` is not followed: it imports `tracejit.numpy` on purpose and the
rest of the public names on first use).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "tracejit"

# (importing package, forbidden prefixes)
CONTRACTS = [
    ("tracejit.ir", ("tracejit.tracer", "tracejit.backend_cpu", "tracejit.backend_cuda")),
    ("tracejit.ir", ("tracejit.backends",)),
    ("tracejit.backend_cpu", ("tracejit.tracer", "tracejit.backend_cuda")),
    ("tracejit.backend_cuda", ("tracejit.tracer", "tracejit.backend_cpu")),
    ("tracejit.tracer", ("tracejit.numpy",)),
]


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(node: ast.AST, module: str) -> list[str]:
    """The tracejit modules (or names in them) one import statement refers to."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:  # relative: resolve against this module's package
        base = module.split(".")[: -node.level] if module else []
        if PACKAGE.joinpath(*module.split(".")[1:]).is_dir():  # a package's __init__
            base = module.split(".")[: len(module.split(".")) - node.level + 1]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    return [target] + [f"{target}.{a.name}" for a in node.names]


def _graph() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(every import of each module, its module-level imports), tracejit modules only."""
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {_module_name(p) for p in paths}
    every: dict[str, set[str]] = {}
    top: dict[str, set[str]] = {}
    for path in paths:
        name = _module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        at_import = _run_at_import(tree)
        every[name], top[name] = set(), set()
        for node in ast.walk(tree):
            found = {m for m in _imported(node, name) if m in modules and m != "tracejit"}
            every[name] |= found
            if id(node) in at_import:
                top[name] |= found
    return every, top


def _run_at_import(tree: ast.Module) -> set[int]:
    """Ids of the nodes that run when the module is imported: all but function bodies."""
    found, stack = set(), list(tree.body)
    while stack:
        n = stack.pop()
        found.add(id(n))
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(n))
    return found


def _path(graph: dict[str, set[str]], start: str, bad: tuple[str, ...]) -> list[str] | None:
    """The chain of module-level imports from `start` to a module under `bad`, or None."""
    parent: dict[str, str] = {}
    queue, seen = [start], {start}
    while queue:
        module = queue.pop(0)
        for nxt in sorted(graph.get(module, ())):
            if nxt in seen:
                continue
            parent[nxt] = module
            if nxt.startswith(bad):
                chain = [nxt]
                while chain[-1] != start:
                    chain.append(parent[chain[-1]])
                return chain[::-1]
            seen.add(nxt)
            queue.append(nxt)
    return None


EVERY, TOP = _graph()


@pytest.mark.parametrize("package, forbidden", CONTRACTS, ids=lambda c: str(c))
def test_imports_point_down_the_pipeline(package, forbidden):
    problems = []
    for module in sorted(m for m in EVERY if m == package or m.startswith(package + ".")):
        direct = sorted(m for m in EVERY[module] if m.startswith(forbidden))
        if direct:
            problems.append(f"{module} imports {', '.join(direct)}")
            continue
        chain = _path(TOP, module, forbidden)
        if chain:
            problems.append(" -> ".join(chain))
    assert not problems, "\n".join(problems)


def test_the_check_sees_imports_of_every_kind():
    source = (
        "import tracejit.tracer.core\n"
        "from tracejit import backends\n"
        "def f():\n"
        "    from tracejit.numpy import _core\n"
    )
    tree = ast.parse(source)
    found = [m for n in ast.walk(tree) for m in _imported(n, "tracejit.ir.x")]
    assert "tracejit.tracer.core" in found and "tracejit.backends" in found
    assert "tracejit.numpy._core" in found
    at_import = _run_at_import(tree)
    assert id(tree.body[2].body[0]) not in at_import and id(tree.body[1]) in at_import
    assert _path({"a": {"b"}, "b": {"tracejit.tracer.core"}}, "a", ("tracejit.tracer",)) == [
        "a",
        "b",
        "tracejit.tracer.core",
    ]
