"""Reading people's words: what a question says beyond its keywords (for now, its time).

A layer between ``config`` and ``contracts``: it imports ``veridiag.contracts`` only, so the
planner (agents), the API and the CLI can all use it."""

from veridiag.text.when import TimeKind, TimeWindow, interpret_time

__all__ = ["TimeKind", "TimeWindow", "interpret_time"]
