"""Level shifts of a series with little or no history before the window: binary segmentation.

``anomaly.detect_anomalies`` judges a window against the series' history; when the data begins
just before the window (a day of minute data, an incident in its first half hour) there is no
history, and the whole series — incident included — becomes the baseline: the normal first
minutes then read as an anomaly *down* and the incident as normal. Here the series is split
where its mean changes instead: binary segmentation with the L2 cost (Scott & Knott 1974), a
BIC-like penalty on each split, the noise estimated from the first differences (robust to the
shifts themselves). The first segment is the level the series starts at; consecutive segments
whose level stands ``MIN_SHIFT_Z`` noise units from it the same way are one episode, with the
same fields ``detect_anomalies`` gives.

Written here rather than taken from ``ruptures``: importing ruptures takes ~1.0 s on this
machine (its cost modules import scipy.stats; measured with ``python -X importtime``), which
alone would exceed the budget of a whole ``ask`` on the demo (≤ 1 s); the L2 segmentation it
would run is these few lines over prefix sums.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime
from itertools import pairwise
from statistics import median

from veridiag.analysis.anomaly import SCORE_CAP, Anomaly

#: Points a segment must hold, and splits tried at most.
MIN_SEGMENT = 3
MAX_CHANGES = 6
#: A segment counts as a shift when its level is this many noise units from the one before.
MIN_SHIFT_Z = 5.0
_MAD_TO_SIGMA = 1.4826


def level_shifts(points: Sequence[tuple[datetime, float]]) -> list[Anomaly]:
    """The segments of ``points`` (time order, finite values) whose level shifted from the
    segment before them, earliest first."""
    values = [v for _t, v in points]
    n = len(values)
    if n < 2 * MIN_SEGMENT:
        return []
    sigma = _noise(values)
    sums = _Prefix(values)
    penalty = 2.0 * sigma * sigma * math.log(n)
    cuts = sorted(_split(sums, 0, n, penalty, MAX_CHANGES))
    bounds = [0, *cuts, n]
    # The first segment is the level the series starts at; the segments after it that stand
    # apart from it the same way, one after another, are one episode (a ramp is several segments).
    expected = median(values[: bounds[1]])
    runs: list[tuple[int, int, int]] = []
    for start, stop in pairwise(bounds[1:]):
        level = median(values[start:stop])
        sign = (1 if level > expected else -1) if abs(level - expected) / sigma >= MIN_SHIFT_Z else 0
        if sign and runs and runs[-1][2] == sign and runs[-1][1] == start:
            runs[-1] = (runs[-1][0], stop, sign)
        elif sign:
            runs.append((start, stop, sign))
    found = []
    for start, stop, sign in runs:
        segment = range(start, stop)
        peak_index = max(segment, key=lambda i: (values[i] - expected) * sign)
        peak = values[peak_index]
        found.append(
            Anomaly(
                onset=points[start][0],
                end=points[stop - 1][0],
                peak_at=points[peak_index][0],
                peak=peak,
                expected=expected,
                direction="up" if sign > 0 else "down",
                score=min(abs(peak - expected) / sigma, SCORE_CAP),
                points=stop - start,
                factor=peak / expected if expected > 0 else None,
            )
        )
    return found


def _noise(values: list[float]) -> float:
    """The noise's standard deviation from the first differences' MAD (a shift is one large
    difference among many small ones, so it barely moves it); a flat series gets a floor of its
    magnitude's thousandth."""
    diffs = [b - a for a, b in pairwise(values)]
    center = median(diffs)
    mad = median(abs(d - center) for d in diffs)
    sigma = _MAD_TO_SIGMA * mad / math.sqrt(2)
    magnitude = max(abs(v) for v in values)
    return max(sigma, 1e-3 * magnitude, 1e-12)


class _Prefix:
    """Sums and sums of squares, so the L2 cost of any segment is O(1)."""

    def __init__(self, values: list[float]) -> None:
        self.s1 = [0.0]
        self.s2 = [0.0]
        for v in values:
            self.s1.append(self.s1[-1] + v)
            self.s2.append(self.s2[-1] + v * v)

    def cost(self, start: int, stop: int) -> float:
        count = stop - start
        total = self.s1[stop] - self.s1[start]
        return (self.s2[stop] - self.s2[start]) - total * total / count


def _split(sums: _Prefix, start: int, stop: int, penalty: float, budget: int) -> list[int]:
    """Binary segmentation: the best split of ``[start, stop)`` if it lowers the cost by more
    than ``penalty``, then each side in turn."""
    if budget <= 0 or stop - start < 2 * MIN_SEGMENT:
        return []
    whole = sums.cost(start, stop)
    best, at = min(
        (sums.cost(start, k) + sums.cost(k, stop), k) for k in range(start + MIN_SEGMENT, stop - MIN_SEGMENT + 1)
    )
    if whole - best <= penalty:
        return []
    left = _split(sums, start, at, penalty, budget - 1)
    right = _split(sums, at, stop, penalty, budget - 1 - len(left))
    return [*left, at, *right]
