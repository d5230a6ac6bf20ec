"""The ``offline`` engine: no model, cannot invent facts (docs/DESIGN.md §3)."""

from veridiag.agents.offline.executor import OfflineExecutor
from veridiag.agents.offline.planner import OfflinePlanner
from veridiag.agents.offline.verifier import OfflineVerifier

__all__ = ["OfflineExecutor", "OfflinePlanner", "OfflineVerifier"]
