"""Deterministic analysis of evidence: pure functions over typed series and counts, no I/O.

The evidence tools (``veridiag.tools``) read the backends and call these; what they compute is
stated in the tools' stored output, so a conclusion drawn here is cited like any tool's fact.
"""
