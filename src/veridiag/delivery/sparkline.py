"""A metric series as a line of block characters (▁▂▃▄▅▆▇█): the culprit's trend where a chat
message cannot carry an image.

The series is cut into at most ``width`` runs of consecutive points, each drawn by its largest
value (a one-minute spike stays visible); the bar is the value's place between the series'
lowest and highest, so a larger value never draws a lower bar. A run without a finite value
(NaN, ±inf) is a space; a series without one is "" and a flat one a row of the lowest bar.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

BARS = "▁▂▃▄▅▆▇█"
#: How many characters a chat message gives the series.
WIDTH = 24


def sparkline(values: Sequence[float], width: int = WIDTH) -> str:
    """``values`` in at most ``width`` characters (fewer when there are fewer points)."""
    if width < 1 or not values:
        return ""
    runs = _runs(values, width)
    finite = [v for v in runs if v is not None]
    if not finite:
        return ""
    # halved, so that the span of the largest floats does not overflow to inf
    low, high = min(finite) / 2, max(finite) / 2
    span = high - low
    top = len(BARS) - 1

    def bar(value: float | None) -> str:
        if value is None:
            return " "
        if span <= 0:
            return BARS[0]
        # the share of the span, clamped: rounding never takes a value past either end
        share = min(1.0, max(0.0, (value / 2 - low) / span))
        return BARS[min(top, int(share * top + 0.5))]

    return "".join(bar(v) for v in runs)


def _runs(values: Sequence[float], width: int) -> list[float | None]:
    """The largest finite value of each of ``min(width, len(values))`` runs of equal length
    (the first runs one longer when the points do not divide evenly); None for a run without one."""
    count = min(width, len(values))
    size, extra = divmod(len(values), count)
    runs: list[float | None] = []
    start = 0
    for index in range(count):
        end = start + size + (1 if index < extra else 0)
        finite = [v for v in values[start:end] if isinstance(v, int | float) and math.isfinite(v)]
        runs.append(max(finite) if finite else None)
        start = end
    return runs
