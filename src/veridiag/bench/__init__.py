"""Benchmarks behind ``veridiag bench``: repeated runs, medians, baselines in the same run."""

from veridiag.bench.runner import BENCHMARKS, run_benchmarks

__all__ = ["BENCHMARKS", "run_benchmarks"]
