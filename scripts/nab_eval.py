"""Evaluate ``detect_anomalies`` on NAB series with labelled anomaly windows.

Not shipped: a development measurement. Usage::

    .venv/bin/python scripts/nab_eval.py [--data /work/shared/samples/metrics] [--min-score 3.5]

For each series: the whole file without a window (labelled windows hit by an episode,
episodes outside every window, whether the most significant episode lies in a window);
then "a question names a day": for every UTC day touching a labelled window, the call
with ``window=`` that day and the preceding ``--lookback-days`` of history (is the top
anomaly in the labelled window?), and for every quiet day (no labelled window within
``--quiet-margin-hours``), whether anything is flagged at all. Finally the time of one
call on the longest series (median of repeated runs).
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from veridiag.analysis.anomaly import DEFAULT_MIN_SCORE, Anomaly, detect_anomalies

Window = tuple[datetime, datetime]


@dataclass
class FileResult:
    name: str
    points: int
    method: str
    hit: int
    labelled: int
    false_alarms: int
    top_in_window: bool | None
    day_hits: int
    day_found: int
    day_questions: int
    quiet_flagged: int
    quiet_days: int


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def _load(path: Path) -> list[tuple[datetime, float]]:
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))[1:]
    return [(_utc(r[0]), float(r[1])) for r in rows]


def _overlaps(anomaly: Anomaly, window: Window) -> bool:
    return anomaly.onset < window[1] and anomaly.end >= window[0]


def _days(first: datetime, last: datetime) -> list[Window]:
    day = first.replace(hour=0, minute=0, second=0, microsecond=0)
    out = []
    while day <= last:
        out.append((day, day + timedelta(days=1)))
        day += timedelta(days=1)
    return out


def evaluate(
    name: str, points: list[tuple[datetime, float]], windows: list[Window], args: argparse.Namespace
) -> FileResult:
    report = detect_anomalies(points, min_score=args.min_score)
    hit = sum(1 for w in windows if any(_overlaps(a, w) for a in report.anomalies))
    false_alarms = sum(1 for a in report.anomalies if not any(_overlaps(a, w) for w in windows))
    top = report.anomalies[0] if report.anomalies else None
    top_in = None if top is None else any(_overlaps(top, w) for w in windows)
    if args.verbose:
        for a in report.anomalies[:12]:
            inside = "IN " if any(_overlaps(a, w) for w in windows) else "out"
            print(
                f"  {inside} {a.onset:%m-%d %H:%M}..{a.end:%m-%d %H:%M} peak {a.peak:g} exp {a.expected:.4g} "
                f"z {a.score:.1f} {a.direction} n={a.points}"
            )
    lookback = timedelta(days=args.lookback_days)
    margin = timedelta(hours=args.quiet_margin_hours)
    day_hits = day_found = day_questions = quiet_flagged = quiet_days = 0
    first_time = points[0][0]
    for day in _days(points[0][0], points[-1][0]):
        if day[0] - first_time < timedelta(days=1):
            continue  # a question needs some history before its day
        history = [p for p in points if day[0] - lookback <= p[0] < day[1]]
        touching = [w for w in windows if w[0] < day[1] and w[1] > day[0]]
        near = [w for w in windows if w[0] - margin < day[1] and w[1] + margin > day[0]]
        if touching:
            day_questions += 1
            found = detect_anomalies(history, window=day, min_score=args.min_score).anomalies
            day_found += bool(found)
            if found and any(_overlaps(found[0], w) for w in windows):
                day_hits += 1
        elif not near:
            quiet_days += 1
            if detect_anomalies(history, window=day, min_score=args.min_score).anomalies:
                quiet_flagged += 1
    return FileResult(
        name,
        len(points),
        report.baseline.method if report.baseline else "-",
        hit,
        len(windows),
        false_alarms,
        top_in,
        day_hits,
        day_found,
        day_questions,
        quiet_flagged,
        quiet_days,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("/work/shared/samples/metrics"))
    parser.add_argument("--min-score", type=float, default=DEFAULT_MIN_SCORE)
    parser.add_argument("--lookback-days", type=float, default=7.0)
    parser.add_argument("--quiet-margin-hours", type=float, default=24.0)
    parser.add_argument("--repeat", type=int, default=21, help="timing runs")
    parser.add_argument("-v", "--verbose", action="store_true", help="list the episodes of each file")
    args = parser.parse_args()
    labels = json.loads((args.data / "anomaly_windows.json").read_text())
    results = []
    for key, spans in labels.items():
        path = args.data / key.split("/")[-1]
        if not path.exists():
            continue
        points = _load(path)
        windows = [(_utc(a), _utc(b)) for a, b in spans]
        if args.verbose:
            print(path.name)
        results.append(evaluate(path.name, points, windows, args))
    header = (
        f"{'file':40} {'points':>6} {'baseline':19} {'hit':>5} {'false':>5} {'top in':>6} "
        f"{'day: top in/found/asked':>23} {'quiet FP':>8}"
    )
    print(header)
    for r in results:
        top = "-" if r.top_in_window is None else ("yes" if r.top_in_window else "no")
        print(
            f"{r.name:40} {r.points:6} {r.method:19} {r.hit:>2}/{r.labelled:<2} {r.false_alarms:5} {top:>6} "
            f"{r.day_hits:>13}/{r.day_found}/{r.day_questions:<3} {r.quiet_flagged:>3}/{r.quiet_days:<4}"
        )
    hits = sum(r.hit for r in results)
    labelled = sum(r.labelled for r in results)
    false = sum(r.false_alarms for r in results)
    tops = sum(1 for r in results if r.top_in_window)
    dq = sum(r.day_hits for r in results), sum(r.day_found for r in results), sum(r.day_questions for r in results)
    quiet = sum(r.quiet_flagged for r in results), sum(r.quiet_days for r in results)
    print(
        f"{'total':40} {'':6} {'':19} {hits:>2}/{labelled:<2} {false:5} {tops:>3}/{len(results):<2} "
        f"{dq[0]:>13}/{dq[1]}/{dq[2]:<3} {quiet[0]:>3}/{quiet[1]:<4} (quiet FP rate {quiet[0] / max(1, quiet[1]):.0%})"
    )
    print(f"timing, first 4000 points of each series, {args.repeat} runs:")
    for path in sorted(args.data.glob("*.csv")):
        points = _load(path)[:4000]
        runs = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            detect_anomalies(points, min_score=args.min_score)
            runs.append(time.perf_counter() - started)
        print(
            f"  {path.name:40} {len(points):5} points  median {statistics.median(runs) * 1000:5.1f} ms"
            f"  min {min(runs) * 1000:5.1f} ms"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
