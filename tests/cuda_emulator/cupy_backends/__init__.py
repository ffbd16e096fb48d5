"""The CUDA emulator's stand-in for CuPy's raw library bindings (see cusolver.py)."""
