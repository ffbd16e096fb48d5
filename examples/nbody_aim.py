"""Aim a probe through an n-body gravity field by differentiating through the simulation.

    python examples/nbody_aim.py [--steps 300] [--iters 20] [--plot nbody_aim.png]

Three fixed stars pull on a probe launched from the origin. The simulation (symplectic Euler,
`--steps` time steps) is one `tracejit.lax.scan`, so it compiles as a loop; `tj.jacfwd`
differentiates the probe's landing point with respect to its launch velocity, through every
step. Newton's method on the launch velocity then hits the target to machine precision. The
Jacobian is checked against central finite differences first. The PNG shows the first and
the final path through the field.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _gallery import save_figure

STARS = np.array([[1.0, 0.6], [0.4, -0.8], [-0.7, 0.3]])  # fixed positions
MASSES = np.array([0.6, 0.9, 0.4])
TARGET = np.array([1.6, -0.4])
DT = 0.01
SOFTENING = 0.05  # keeps the force finite when the probe passes close to a star
MAX_STEP = 0.3  # Newton steps longer than this are shortened: the landing map is nonlinear


def accel(p):
    """Gravitational acceleration of the probe at position p (G = 1)."""
    d = STARS - p  # (3, 2)
    r2 = tnp.sum(d * d, axis=1) + SOFTENING**2
    return tnp.sum((MASSES / (r2 * tnp.sqrt(r2)))[:, None] * d, axis=0)


def simulate(v0, steps: int):
    """The probe's path (steps, 2) from the origin with launch velocity v0."""

    def step(state, _):
        p, v = state
        v = v + DT * accel(p)
        p = p + DT * v
        return (p, v), p

    _, path = lax.scan(step, (np.zeros(2), v0), None, length=steps)
    return path


def draw_paths(ax, first, final) -> None:
    ax.scatter(*STARS.T, s=400 * MASSES, c="orange", label="stars")
    ax.plot(*first.T, "--", c="gray", label="first launch")
    ax.plot(*final.T, c="tab:blue", label="after Newton")
    ax.plot(*TARGET, "rx", markersize=12, label="target")
    ax.set(title="aiming a probe through the field", aspect="equal")
    ax.legend(loc="best", fontsize=8)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--plot", default="nbody_aim.png", help="PNG of the paths ('' for none)")
    args = parser.parse_args()

    # the step count shapes the loop: fix it with partial (transforms trace every argument)
    def landing(v0):
        return simulate(v0, args.steps)[-1]

    land = tj.jit(landing)
    jacobian = tj.jit(tj.jacfwd(landing))  # forward mode through every step of the scan
    v = np.array([1.0, -0.5])
    first_path = np.asarray(tj.jit(lambda v0: simulate(v0, args.steps))(v))
    start = time.perf_counter()
    jac = jacobian(v)
    print(f"compiled the simulation and its Jacobian in {time.perf_counter() - start:.1f} s")

    eps = 1e-6  # the derivative through the whole simulation, against finite differences
    fd = np.stack([(land(v + eps * e) - land(v - eps * e)) / (2 * eps) for e in np.eye(2)], 1)
    np.testing.assert_allclose(jac, fd, rtol=1e-5, atol=1e-7)
    print(f"Jacobian matches central finite differences (max error {np.abs(jac - fd).max():.1e})")

    for i in range(1, args.iters + 1):  # damped Newton: land(v) = TARGET
        miss = land(v) - TARGET
        distance = float(np.linalg.norm(miss))
        print(f"[{'#' * min(20, i):<20}] iteration {i:2d}  miss distance {distance:.3e}")
        if distance < 1e-9:
            break
        step = np.linalg.solve(jacobian(v), miss)
        v = v - step * min(1.0, MAX_STEP / float(np.linalg.norm(step)))
    print(f"launch velocity {np.round(v, 6)} lands the probe {distance:.1e} from the target")
    final_path = np.asarray(tj.jit(lambda v0: simulate(v0, args.steps))(v))
    save_figure(args.plot, lambda ax: draw_paths(ax, first_path, final_path), size=(5, 5))
    if distance > 1e-6:
        raise SystemExit(f"missed the target by {distance:.3g}")


if __name__ == "__main__":
    main()
