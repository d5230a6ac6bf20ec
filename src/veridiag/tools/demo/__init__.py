"""The bundled demo environment: a small shop (gateway, order-, payment-, inventory-service,
MySQL, Redis) on one day, 2026-07-07 08:00–16:00 UTC, with five incidents.

It is data, not code: ``environment.yaml`` describes the ordinary day (series with their
baselines, background log patterns, random values) and each folder under ``incidents/`` one
incident (metric shapes, generated and single log lines, changes). ``loader`` validates the
files; ``environment`` generates the day from a fixed seed, so every install diagnoses the same
day and evals can name exact lines.
"""

from veridiag.tools.demo.environment import ChangeEvent, DemoEnvironment, LogLine, MetricPoint
from veridiag.tools.demo.loader import DemoDataError, bundled_environment, load_environment

__all__ = [
    "ChangeEvent",
    "DemoDataError",
    "DemoEnvironment",
    "LogLine",
    "MetricPoint",
    "bundled_environment",
    "load_environment",
]
