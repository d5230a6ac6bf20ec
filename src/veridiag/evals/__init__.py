"""Regression evals: hallucination cases as YAML data, run through the real pipeline."""

from veridiag.evals.fixtures import Case, FixtureError, load_case, load_suite
from veridiag.evals.runner import CaseResult, EvalRunner, run_suite
from veridiag.evals.truth import ClaimOutcome, TruthRates, truth_rates

__all__ = [
    "Case",
    "CaseResult",
    "ClaimOutcome",
    "EvalRunner",
    "FixtureError",
    "TruthRates",
    "load_case",
    "load_suite",
    "run_suite",
    "truth_rates",
]
