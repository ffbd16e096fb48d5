"""Dump the generated C++ and CUDA source of a fixed set of programs, to diff two versions.

The programs: the benchmark workloads (benchmarks/workloads.py: w1, softmax, layernorm, the
MLP step with its gradient), the compile-scaling programs (benchmarks/compile_programs.py,
small sizes), a random-number program, and the CUDA test corpus (tests/_cuda_programs.py:
every elementwise op and dtype, reductions, rowwise softmax/layernorm, gathers and scatters,
cumsum, threefry, layouts, lax loops). Each program's graph (after the optimization passes)
is written as `<name>.cpp` (the CPU backend's translation unit) and `<name>.cu` (the CUDA
backend's source; loop and branch bodies as `<name>_regionK.cu`). Nothing is compiled.

Run: `python tools/dump_generated.py OUT_DIR`, on two checkouts, then `diff -r A B`.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.backend_cpu import codegen, loops, schedule_graph
from tracejit.backend_cuda import cuda_source
from tracejit.ir.regions import nested_graphs


def _test_corpus() -> dict:
    """tests/**/_cuda_programs.py's corpus (wherever the test reorganization put it)."""
    path = next(iter(sorted(ROOT.glob("tests/**/_cuda_programs.py"))))
    sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location("_cuda_programs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.corpus()


def _benchmarks() -> dict:
    import compile_programs
    import workloads

    progs = {}
    x = workloads.make_data("softmax", "tiny")["x"]
    progs["bench_softmax"] = (lambda a: workloads._generic_softmax(tnp, a), x)
    progs["bench_layernorm"] = (lambda a: workloads._generic_layernorm(tnp, a), x)
    progs["bench_w1"] = (lambda a, b: tnp.tanh(a * b + 0.5 * a) * 2 - b, x, x)
    mlp = workloads.make_data("mlp", "tiny")
    progs["bench_mlp"] = (_mlp_step(workloads), mlp["params"], mlp["x"], mlp["y"])
    for name in ("rnn", "lstm", "fluid"):
        loss, args = compile_programs.make(name, 3, np)
        progs[f"bench_{name}_grad"] = (tj.grad(loss), *args)
    return progs


def _mlp_step(workloads):
    """benchmarks/workloads.py's MLP training step (its loss and update), not jitted."""
    jitted = workloads._tj_mlp_step()
    return lambda params, x, y: jitted(params, x, y)


def _random(key):
    k1, k2 = tj.random.split(key)
    return tj.random.uniform(k1, (7, 5)), tj.random.normal(k2, (33,))


def programs() -> dict:
    progs = _benchmarks()
    progs["random"] = (_random, np.asarray(tj.random.key(0)))
    progs["cumsum_axes"] = (lambda a: (tnp.cumsum(a, 0), tnp.cumsum(a, 1)), np.ones((5, 9)))
    progs.update(_test_corpus())
    return progs


def dump(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    count = 0
    for name, (fun, *args) in programs().items():
        graph = tj.jit(fun).lower(*args).graph
        schedule = schedule_graph(graph)
        plan = loops.plan_loops(schedule)
        (out / f"{name}.cpp").write_text(codegen.generate(schedule, name, plan))
        (out / f"{name}.cu").write_text(cuda_source(graph).source)
        for k, region in enumerate(nested_graphs(graph)):
            (out / f"{name}_region{k}.cu").write_text(cuda_source(region).source)
        count += 1
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    n = dump(parser.parse_args().out)
    print(f"{n} programs written to {parser.parse_args().out}")


if __name__ == "__main__":
    main()
