"""Regression evals: hallucination cases as YAML data, run through the real pipeline."""

from veridiag.evals.fixtures import Case, FixtureError, load_case, load_suite
from veridiag.evals.runner import CaseResult, EvalRunner, run_suite

__all__ = ["Case", "CaseResult", "EvalRunner", "FixtureError", "load_case", "load_suite", "run_suite"]
