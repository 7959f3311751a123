"""Benchmarks: `.venv/bin/python bench/run.py` (see run.py)."""
