"""The C-family kernel writer shared by the C++ (CPU) and CUDA backends.

- `library`: the C helpers every generated unit may call (index clamping, NumPy's wrapping
  add, NaN-propagating max/min, first-index argmax/argmin, Threefry), written once with the
  backend's `TJ_FN` qualifier.

The backends keep only what differs: their loop and thread structure, and how they launch.
"""
