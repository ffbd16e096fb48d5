"""Run a test program in a fresh Python process and read the JSON it prints last (for tests
of what a new process sees: the disk cache, keys, hash seeds)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_json(code: str, cache_dir, seed: str) -> dict:
    """`python -c code` with the cache at `cache_dir` and PYTHONHASHSEED=`seed`; the last
    stdout line, parsed as JSON (the process must exit 0)."""
    env = dict(os.environ, TRACEJIT_CACHE_DIR=str(cache_dir), PYTHONHASHSEED=seed)
    env["PYTHONPATH"] = str(ROOT)
    env.pop("TRACEJIT_LOG_COMPILES", None)
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
