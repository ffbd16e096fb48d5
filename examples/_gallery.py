"""What the gallery's examples share: a one-line progress bar and an optional PNG plot.

`Progress(total, label)` redraws one line (`\\r`) on a terminal and prints about ten lines
otherwise (logs, CI); `save_plot` draws named curves with matplotlib when it is installed
(`pip install -e ".[examples]"` brings it) and says how to get it when it is not.
"""

from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, total: int, label: str, width: int = 24):
        self.total, self.label, self.width = max(total, 1), label, width
        self.start = time.perf_counter()
        self.tty = sys.stdout.isatty()
        self.shown = -1

    def update(self, done: int, **metrics: float) -> None:
        tenth = done * 10 // self.total
        if not self.tty and tenth == self.shown and done != self.total:
            return
        self.shown = tenth
        fill = done * self.width // self.total
        extra = "  ".join(f"{k} {v:.4g}" for k, v in metrics.items())
        seconds = time.perf_counter() - self.start
        line = (
            f"{self.label} [{'#' * fill:<{self.width}}] {done}/{self.total} {extra} {seconds:.1f}s"
        )
        print(("\r" if self.tty else "") + line, end="" if self.tty else "\n", flush=True)

    def close(self) -> None:
        if self.tty:
            print()


def save_figure(path: str | None, draw, size=(6, 4)) -> bool:
    """Call `draw(ax)` on a new matplotlib figure and save it as the PNG `path`; False (and a
    hint) when matplotlib is not installed or `path` is empty."""
    if not path:
        return False
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"(no picture: install matplotlib to get {path})")
        return False
    fig, ax = plt.subplots(figsize=size)
    draw(ax)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"saved {path}")
    return True


def save_plot(path: str | None, curves: dict, title: str, xlabel: str, ylabel: str) -> bool:
    """Plot `curves` ({name: list of y}) to the PNG `path`."""

    def draw(ax):
        for name, ys in curves.items():
            ax.plot(range(1, len(ys) + 1), ys, label=name)
        ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
        ax.legend()

    return save_figure(path, draw)


def save_images(path: str | None, images, title: str) -> bool:
    """A grid of grayscale `images` (rows, cols, h, w) to the PNG `path`."""
    rows, cols, h, w = images.shape
    grid = images.transpose(0, 2, 1, 3).reshape(rows * h, cols * w)

    def draw(ax):
        ax.imshow(grid, cmap="gray_r")
        ax.set(title=title, xticks=[], yticks=[])

    return save_figure(path, draw, size=(cols * 0.6 + 1, rows * 0.6 + 1))
