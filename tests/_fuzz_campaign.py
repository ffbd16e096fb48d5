"""A long fuzzing campaign: the fuzz tests' bodies on many random batches, without stopping.

pytest stops at the first failing example and shrinks it; a campaign instead records every
failure (program source, inputs and the differing elements) and goes on, and writes its
counts as JSON every 100 batches. Shrink a recorded failure afterwards by running the
program through the test (or by hand: the record is plain Python).

    python tests/_fuzz_campaign.py forward 1300 cpu /tmp/fuzz_cpu        # ~7,000 programs
    TRACEJIT_CUDA_EMULATOR=1 python tests/_fuzz_campaign.py forward 450 cuda /tmp/fuzz_cuda
    python tests/_fuzz_campaign.py gradient 600 cpu /tmp/fuzz_grad

Batches hold 4..12 programs (FUZZ_BATCH_MIN / FUZZ_BATCH_MAX) and each compiles once.
"""

from __future__ import annotations

import collections
import json
import os
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE / "backend"), str(HERE.parent)]  # test_fuzz*.py: tests/backend
if os.environ.get("TRACEJIT_CUDA_EMULATOR") == "1":
    sys.path.insert(0, str(HERE / "cuda_emulator"))

import hypothesis.errors
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import tracejit as tj


def _target(kind: str):
    """(strategy of one program, the test whose body checks a batch)."""
    if kind == "forward":
        import test_fuzz
        from _fuzz_programs import programs

        return programs(), test_fuzz.test_compiled_programs_match_numpy
    import test_fuzz_grads
    from _fuzz_grads import grad_programs

    return (
        grad_programs(),
        test_fuzz_grads.test_compiled_gradients_match_eager_and_finite_differences,
    )


def campaign(kind: str, batches: int, device: str, out: str) -> dict:
    from _fuzz_check import STATS

    strategy, test = _target(kind)
    import numpy as np

    np.set_printoptions(floatmode="unique", threshold=sys.maxsize)  # reports replay exactly
    low = int(os.environ.get("FUZZ_BATCH_MIN", "4"))
    high = int(os.environ.get("FUZZ_BATCH_MAX", "12"))
    failures: collections.Counter = collections.Counter()
    start, tried = time.time(), [0]

    def dump() -> dict:
        report = {"batches": tried[0], "failures": dict(failures), "stats": dict(STATS)}
        report["seconds"] = round(time.time() - start)
        Path(out + ".json").write_text(json.dumps(report, indent=1))
        return report

    def record(text: str) -> None:
        with open(out + ".log", "a") as f:
            f.write(text + "\n")

    @settings(
        max_examples=batches,
        database=None,
        phases=[Phase.generate],
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.lists(strategy, min_size=low, max_size=high))
    def run(batch):
        tried[0] += 1
        if tried[0] % int(os.environ.get("FUZZ_DUMP_EVERY", "100")) == 0:
            dump()
        try:
            test.hypothesis.inner_test(batch=batch, device=device)
        except hypothesis.errors.UnsatisfiedAssumption:
            raise
        except AssertionError as e:
            failures["mismatch"] += 1
            record(f"=== MISMATCH\n{e}")
        except Exception as e:  # noqa: BLE001 - a crash is a finding too: recorded, go on
            failures[type(e).__name__] += 1
            record(f"=== ERROR {type(e).__name__}: {e}\n{batch!r}\n{traceback.format_exc()}")

    run()
    return dump()


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    tj.config.cache_dir = tempfile.mkdtemp(prefix="tracejit-fuzz-")
    tj.config.verify_graphs = True
    tj.config.progress = False  # one line per batch on stderr otherwise
    kind, batches, device, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    print(json.dumps(campaign(kind, batches, device, out), indent=1))
