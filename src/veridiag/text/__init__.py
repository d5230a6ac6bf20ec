"""The text library: people's words and tools' outputs as the checks read them.

Han characters and the question's language (``cjk``), reader text (``normalize``: full width,
invisible characters, look-alike letters, Chinese numerals), exact facts (``entities``, with
the units of ``units``), words (``tokens``: segmentation, keywords), full-text queries
(``search``), phrase lists (``phrases``), how a call and its values are written (``render``),
time words (``when``), and the YAML word files every layer keeps its lists in (``wordfiles``).

A layer between ``config`` and ``contracts``: it imports ``veridiag.contracts`` only, so the
Gatekeeper, the tools, the agents, the pipeline, the API and the CLI can all use it.
"""

from typing import TYPE_CHECKING

from veridiag._lazy import lazy_exports

if TYPE_CHECKING:
    from veridiag.text.normalize import reader_text
    from veridiag.text.when import TimeKind, TimeWindow, interpret_time

# Lazy (``veridiag._lazy``): ``veridiag.text.cjk`` should not cost what the time words cost.
__getattr__ = lazy_exports(
    __name__, {".normalize": ("reader_text",), ".when": ("TimeKind", "TimeWindow", "interpret_time")}
)

__all__ = ["TimeKind", "TimeWindow", "interpret_time", "reader_text"]
