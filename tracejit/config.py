"""`tj.config`: every setting of tracejit in one object, each with a TRACEJIT_* env default.

| setting              | env var                        | default                  |
|----------------------|--------------------------------|--------------------------|
| cache_dir            | TRACEJIT_CACHE_DIR             | the user cache dir       |
| cache_max_bytes      | TRACEJIT_CACHE_MAX_BYTES       | 2 GiB ("500M", "4G"; 0: no cap) |
| default_device       | TRACEJIT_DEFAULT_DEVICE        | "cpu"                    |
| memory_budget        | TRACEJIT_MEMORY_BUDGET         | 1.0                      |
| explain_cache_misses | TRACEJIT_EXPLAIN_CACHE_MISSES  | False                    |
| log_compiles         | TRACEJIT_LOG_COMPILES          | False                    |
| debug_dir            | TRACEJIT_DEBUG_DIR             | None (no dumps)          |
| debug_nans           | TRACEJIT_DEBUG_NANS            | False                    |
| verify_graphs        | TRACEJIT_VERIFY_GRAPHS         | False (tests turn it on) |
| cuda_graphs          | TRACEJIT_CUDA_GRAPHS           | "auto" (backend_cuda/graphs.py) |
| fp_contract          | TRACEJIT_FP_CONTRACT           | False (no a*b+c -> fma)  |
| progress             | TRACEJIT_PROGRESS              | True (progress.py)       |
| progress_after       | TRACEJIT_PROGRESS_AFTER        | 2.0 seconds              |

>>> import tracejit as tj
>>> tj.config.explain_cache_misses = True
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields

from tracejit.errors import TracejitAttributeError, TracejitValueError


def _env_bool(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def _env_str(name: str, default: str | None) -> str | None:
    value = os.environ.get(name)
    return value if value else default


def _env_on(name: str) -> bool:
    """True unless the variable says off ("0", "false", "no", "off")."""
    return os.environ.get(name, "").strip().lower() not in ("0", "false", "no", "off")


def _default_cache_dir() -> str:
    env = os.environ.get("TRACEJIT_CACHE_DIR")
    if env:
        return env
    import platformdirs  # deferred: only needed when TRACEJIT_CACHE_DIR is unset

    return platformdirs.user_cache_dir("tracejit", appauthor=False)


def _env_bytes(name: str, default: int) -> int:
    return parse_bytes(os.environ.get(name) or str(default))


def parse_bytes(text) -> int:
    """Bytes from an int or a string with an optional K/M/G/T suffix (powers of 1024).

    >>> parse_bytes("500M"), parse_bytes(4096)
    (524288000, 4096)
    """
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        s = str(text).strip().upper().removesuffix("B").removesuffix("I")
        scale = 1024 ** ("KMGT".index(s[-1]) + 1) if s and s[-1] in "KMGT" else 1
        try:
            value = int(float(s[:-1] if scale > 1 else s) * scale)
        except ValueError:
            raise TracejitValueError(
                f"cache_max_bytes must be a size like 2G or 500M, got {text!r}"
            )
    if value < 0:
        raise TracejitValueError(f"cache_max_bytes must be >= 0 (0: no cap), got {text!r}")
    return value


DEVICES = ("cpu", "cuda", "numpy")
CUDA_GRAPHS = ("auto", "always", "never")


@dataclass
class Config:
    cache_dir: str = field(default_factory=_default_cache_dir)
    # evict least-recently-used compiled entries past this size (0: never)
    cache_max_bytes: int = field(
        default_factory=lambda: _env_bytes("TRACEJIT_CACHE_MAX_BYTES", 2 * 1024**3)
    )
    default_device: str = field(
        default_factory=lambda: _env_str("TRACEJIT_DEFAULT_DEVICE", "cpu") or "cpu"
    )
    memory_budget: float = field(
        default_factory=lambda: float(os.environ.get("TRACEJIT_MEMORY_BUDGET", "1.0"))
    )
    explain_cache_misses: bool = field(
        default_factory=lambda: _env_bool("TRACEJIT_EXPLAIN_CACHE_MISSES")
    )
    log_compiles: bool = field(default_factory=lambda: _env_bool("TRACEJIT_LOG_COMPILES"))
    debug_dir: str | None = field(default_factory=lambda: _env_str("TRACEJIT_DEBUG_DIR", None))
    debug_nans: bool = field(default_factory=lambda: _env_bool("TRACEJIT_DEBUG_NANS"))
    # run the IR verifier after tracing and after every transformation and pass
    verify_graphs: bool = field(default_factory=lambda: _env_bool("TRACEJIT_VERIFY_GRAPHS"))
    # replay a CUDA function's launches as one CUDA graph: "auto" when measurably faster
    cuda_graphs: str = field(
        default_factory=lambda: _env_str("TRACEJIT_CUDA_GRAPHS", "auto") or "auto"
    )

    # let the C++/CUDA compilers contract a * b + c into one fma (faster, but results then
    # differ from NumPy's in the last bit, or overflow differently); applies to later compiles
    fp_contract: bool = field(default_factory=lambda: _env_bool("TRACEJIT_FP_CONTRACT"))
    # one updating line on stderr (function, phase, counts, elapsed) for a compile that has
    # run longer than progress_after seconds (tracejit/progress.py)
    progress: bool = field(default_factory=lambda: _env_on("TRACEJIT_PROGRESS"))
    progress_after: float = field(
        default_factory=lambda: float(os.environ.get("TRACEJIT_PROGRESS_AFTER", "2.0"))
    )

    def __setattr__(self, name: str, value) -> None:
        if name not in {f.name for f in fields(Config)}:
            raise TracejitAttributeError(f"tj.config has no setting {name!r}")
        if name == "default_device" and value not in DEVICES:
            raise TracejitValueError(f"default_device must be one of {DEVICES}, got {value!r}")
        if name == "cuda_graphs" and value not in CUDA_GRAPHS:
            raise TracejitValueError(f"cuda_graphs must be one of {CUDA_GRAPHS}, got {value!r}")
        if name == "progress_after" and not float(value) >= 0.0:
            raise TracejitValueError(f"progress_after must be >= 0 seconds, got {value!r}")
        if name == "cache_max_bytes":
            value = parse_bytes(value)
        if name == "memory_budget" and not 0.0 <= float(value) <= 1.0:
            raise TracejitValueError(f"memory_budget must be in [0, 1], got {value!r}")
        object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        items = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self))
        return f"Config({items})"


config = Config()
