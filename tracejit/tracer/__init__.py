"""Tracing: Tracer, Trace/bind, pytrees, jit, and the NumPy array protocols."""
