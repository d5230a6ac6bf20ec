"""Reading people's words: what a question says beyond its keywords (its time), and text as
a reader sees it (full width, invisible characters, look-alike letters, Chinese numerals).

A layer between ``config`` and ``contracts``: it imports ``veridiag.contracts`` only, so the
planner (agents), the API and the CLI can all use it."""

from veridiag.text.normalize import reader_text
from veridiag.text.when import TimeKind, TimeWindow, interpret_time

__all__ = ["TimeKind", "TimeWindow", "interpret_time", "reader_text"]
