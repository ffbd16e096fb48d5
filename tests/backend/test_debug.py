"""Debug aids: per-function dump folders of each compile stage; debug_nans diagnosis."""

from __future__ import annotations

import os

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import debug
from tracejit.debug import NonFiniteError, check_outputs, current_dump, start_dump
from tracejit.errors import TracejitError
from tracejit.ir.interpret import evaluate
from tracejit.ir.passes import run_passes

THIS_FILE = os.path.basename(__file__)


@pytest.fixture
def dump_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(tj.config, "debug_dir", str(tmp_path))
    return tmp_path


@pytest.fixture
def debug_nans(monkeypatch):
    monkeypatch.setattr(tj.config, "debug_nans", True)


def _read(path) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def test_dumps_every_stage_that_changed_in_order(dump_dir):
    def repeated(x):
        return tnp.log(1.0 + tnp.sin(x) * tnp.sin(x) * 1.0)

    x = np.linspace(0, 1, 4)
    f = tj.jit(repeated, device="numpy")
    np.testing.assert_allclose(f(x), np.log1p(np.sin(x) ** 2), rtol=1e-12)
    (folder,) = os.listdir(dump_dir)
    assert folder.startswith("repeated-")
    names = sorted(os.listdir(dump_dir / folder))
    assert names == [
        "00_traced.txt",
        "01_after_rewrite.txt",
        "02_post_grad_passes.txt",
    ]
    traced = tj.make_ir(repeated)(x)
    assert _read(dump_dir / folder / names[0]) == str(traced) + "\n"
    expected, records = run_passes(traced, "post_grad")
    assert [r.name for r in records if r.changed] == ["rewrite"]
    assert _read(dump_dir / folder / names[1]) == str(expected) + "\n"
    assert "log1p" in _read(dump_dir / folder / names[1])
    summary = _read(dump_dir / folder / names[2]).splitlines()
    assert [line.split()[0] for line in summary] == [r.name for r in records]
    assert "mul-one x1" in summary[0] and "log1p x1" in summary[0]


def test_grad_on_cpu_dumps_joint_graph_schedule_and_source(dump_dir):
    def loss(w, x):
        return tnp.sum(tnp.tanh(x @ w) ** 2)

    w, x = np.ones((3, 2)), np.ones((4, 3))
    tj.jit(tj.grad(loss))(w, x)
    (folder,) = os.listdir(dump_dir)
    names = sorted(os.listdir(dump_dir / folder))
    stages = [n.split("_", 1)[1] for n in names]
    for stage in ("joint.txt", "traced.txt", "schedule.txt", "source.cpp.txt"):
        assert stage in stages, names
    # in pipeline order: joint graph, then what jit traced, then the schedule, then C++
    order = [stages.index(s) for s in ("joint.txt", "traced.txt", "schedule.txt", "source.cpp.txt")]
    assert order == sorted(order)
    assert "matmul" in _read(dump_dir / folder / names[stages.index("joint.txt")])
    assert "tj_run" in _read(dump_dir / folder / names[stages.index("source.cpp.txt")])


def test_vjp_dumps_both_partitioned_graphs(dump_dir):
    from tracejit import debug

    with debug.start_dump("vjp_of_sin") as handle:
        tj.vjp(tnp.sin, np.zeros(3))
    stages = [os.path.basename(p).split("_", 1)[1] for p in handle.files()]
    assert "partition_forward.txt" in stages and "partition_backward.txt" in stages


def test_each_compile_gets_its_own_folder(dump_dir):
    f = tj.jit(lambda x: x * 2.0, device="numpy")
    f(np.ones(2))
    f(np.ones(2))  # cached: no new compile, no new folder
    f(np.ones(3))  # a new signature compiles again
    folders = sorted(os.listdir(dump_dir))
    assert len(folders) == 2 and all(n.startswith("lambda") for n in folders)
    for name in folders:
        files = sorted(os.listdir(dump_dir / name))  # nothing to optimize: no after_* file
        assert files == ["00_traced.txt", "01_post_grad_passes.txt"]


def test_no_dumps_without_a_debug_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(tj.config, "debug_dir", None)
    tj.jit(lambda x: x + 1.0, device="numpy")(np.ones(2))
    handle = start_dump("jit(f)")
    assert not handle.enabled and handle.write("schedule", "...") is None
    assert os.listdir(tmp_path) == []


def test_dump_api_for_later_stages(tmp_path):
    class Lazy:  # stands for a schedule: str() is taken only when the dump is enabled
        calls = 0

        def __str__(self):
            Lazy.calls += 1
            return "step 0: kernel_0"

    assert current_dump().write("schedule", Lazy()) is None and Lazy.calls == 0
    with start_dump("jit(my fn)", str(tmp_path)) as handle:
        assert current_dump() is handle
        handle.write("traced", "{ lambda . let in () }")
        current_dump().write("schedule", Lazy())
        current_dump().write("generated source", "int main() {}")
    assert not current_dump().enabled
    assert os.path.basename(handle.folder).startswith("my_fn-")
    files = [os.path.basename(p) for p in handle.files()]
    assert files == ["00_traced.txt", "01_schedule.txt", "02_generated_source.txt"]
    assert _read(handle.files()[1]) == "step 0: kernel_0\n" and Lazy.calls == 1


def test_dump_folder_numbers_skip_existing_folders(tmp_path):
    first = start_dump("jit(g)", str(tmp_path))
    os.makedirs(os.path.join(tmp_path, f"g-{int(first.folder.rsplit('-', 1)[1]) + 1}"))
    second = start_dump("jit(g)", str(tmp_path))
    assert second.folder != first.folder and os.path.isdir(second.folder)
    assert os.listdir(second.folder) == []


# ---------------------------------------------------------------- debug_nans


def test_debug_nans_names_the_forward_op_and_line(debug_nans):
    def f(x):
        y = x * 2.0
        return tnp.log(y - 2.0) + y  # log(0) at x = 1

    line = f.__code__.co_firstlineno + 2
    with pytest.raises(NonFiniteError) as info:
        tj.jit(f, device="numpy")(np.array([1.0, 2.0]))
    msg = str(info.value)
    assert "output 0 contains Inf (1 of 2 elements)" in msg
    assert "`log` in the forward pass" in msg
    assert f"{THIS_FILE}:{line}" in msg
    assert "log(0.0) = -inf" in msg
    assert isinstance(info.value, FloatingPointError) and isinstance(info.value, TracejitError)


def test_debug_nans_on_the_test_device(debug_nans, device):
    with pytest.raises(NonFiniteError, match="`sqrt` in the forward pass"):
        tj.jit(lambda x: tnp.sqrt(x - 1.0), device=device)(np.zeros(3, np.float32))


def test_debug_nans_finds_log_of_zero_in_the_backward_pass(debug_nans):
    def f(x):
        # the classic where-trap: log(0) is masked in the forward pass, but its gradient
        # 1/x is evaluated everywhere and multiplied by the mask: 0/0 in the backward pass
        return tnp.sum(tnp.where(x > 0, tnp.log(x), 0.0))

    x = np.array([0.0, 1.0, 2.0])
    g = tj.jit(tj.grad(f), device="numpy")
    tj.config.debug_nans = False
    assert np.isnan(g(x)[0])  # off: the NaN comes back silently
    tj.config.debug_nans = True
    with pytest.raises(NonFiniteError) as info:
        g(x)
    msg = str(info.value)
    assert "in the backward pass" in msg and "output 0 contains NaN" in msg
    assert THIS_FILE in msg  # the source line autodiff recorded for the backward op


def test_debug_nans_blames_the_arguments(debug_nans):
    with pytest.raises(NonFiniteError, match="input 0 already contains NaN or Inf"):
        tj.jit(lambda x: x * 2.0, device="numpy")(np.array([np.nan, 1.0]))


def test_debug_nans_follows_the_path_to_the_output(debug_nans):
    def f(x):
        masked = tnp.where(x > 0, tnp.log(x), 0.0)  # -inf at 0, but masked out
        return masked + tnp.exp(x * 1000.0)  # overflows at x = 2

    with pytest.raises(NonFiniteError, match="`exp` in the forward pass") as info:
        tj.jit(f, device="numpy")(np.array([0.0, 2.0]))
    assert "exp(2000.0) = inf" in str(info.value)


def test_debug_nans_says_when_the_reference_does_not_reproduce():
    g = tj.make_ir(lambda x: x + 1.0)(np.ones(2))
    with pytest.raises(NonFiniteError, match="gives finite outputs") as info:
        check_outputs(g, [np.ones(2)], [np.array([np.nan, 2.0])], "jit(f)")
    assert "cannot be named" in str(info.value)


def test_debug_nans_is_quiet_for_finite_and_integer_outputs(debug_nans):
    f = tj.jit(lambda x, n: (tnp.tanh(x), n * 2), device="numpy")
    y, m = f(np.array([0.5, -100.0]), np.array([1, 2], np.int32))
    np.testing.assert_allclose(y, np.tanh([0.5, -100.0]))
    np.testing.assert_array_equal(m, [2, 4])


def test_debug_nans_off_returns_non_finite_values(monkeypatch):
    monkeypatch.setattr(tj.config, "debug_nans", False)
    out = tj.jit(lambda x: tnp.log(x), device="numpy")(np.zeros(2))
    np.testing.assert_array_equal(out, [-np.inf, -np.inf])


def test_check_outputs_agrees_with_the_reference_on_random_graphs():
    x = np.array([-1.0, 0.0, 1.0, 4.0])
    g = tj.make_ir(lambda x: (tnp.sqrt(x), tnp.log(x + 1.0), tnp.exp(x)))(x)
    outs = evaluate(g, [x])
    with pytest.raises(NonFiniteError) as info:
        check_outputs(g, [x], outs, "jit(h)")
    assert "`sqrt` in the forward pass" in str(info.value)  # sqrt(-1): the first output
    assert debug.NonFiniteError is NonFiniteError
