"""Accuracy of veridiag's log parsing and template mining against loghub's ground truth.

For each ``X_2k.log`` beside its ``X_2k.log_structured.csv`` (loghub's parsed fields and EventId of
every line) this reports:

* field accuracy of ``read_log_file``: timestamp, level, component and message (the CSV's
  Content) per line, a line merged into the entry above counting as wrong on every field;
* grouping accuracy of ``TemplateMiner`` on the Content column: a line is correct when the set
  of lines in its mined group equals the set of lines with its EventId (the loghub benchmark's
  "GA").

Usage: ``.venv/bin/python scripts/loghub_eval.py [DIR] [--sweep]`` (DIR defaults to the shared
samples); ``--sweep`` also tries drain's similarity threshold and depth.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import Counter, defaultdict
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from veridiag.ingest.logformats import LogEntry, LogFileReport, read_log_file
from veridiag.tools.templates import DEPTH, SIM_TH, TemplateMiner

SAMPLES = Path("/work/shared/samples/logs")


def _truth_ts(name: str, row: dict[str, str]) -> Callable[[LogEntry], bool]:
    """How a mined entry's time is compared with the CSV's for each dataset."""
    if name == "HPC":
        return lambda e: int(e.ts.timestamp()) == int(row["Time"])
    if name == "Thunderbird":
        return lambda e: int(e.ts.timestamp()) == int(row["Timestamp"])
    if name == "OpenStack":
        want = datetime.fromisoformat(f"{row['Date']} {row['Time']}").replace(tzinfo=UTC)
        return lambda e: e.ts == want
    if name == "HealthApp":
        date, clock = row["Time"].split("-")
        h, m, s, ms = (int(p) for p in clock.split(":"))
        want = datetime(int(date[:4]), int(date[4:6]), int(date[6:]), h, m, s, ms * 1000, tzinfo=UTC)
        return lambda e: e.ts == want
    if name == "BGL":
        return lambda e: int(e.ts.timestamp()) == int(row["Timestamp"])
    if name == "Android":  # no year in the file: month, day and time (to the ms) must agree
        month, dd = (int(p) for p in row["Date"].split("-"))
        return lambda e: (e.ts.month, e.ts.day, e.ts.strftime("%H:%M:%S.%f")[:12]) == (month, dd, row["Time"])
    if name == "Proxifier":  # no year in the file: month, day and time must agree
        day, clock = row["Time"].split(" ")
        month, dd = (int(p) for p in day.split("."))
        return lambda e: (e.ts.month, e.ts.day, e.ts.strftime("%H:%M:%S")) == (month, dd, clock)
    raise ValueError(name)


#: loghub's level spellings read as veridiag's four (Android writes one letter, BGL FATAL …).
_LEVELS = {"WARNING": "WARN", "SEVERE": "ERROR", "FAILURE": "ERROR", "FATAL": "ERROR"}
_LETTERS = {"V": "DEBUG", "D": "DEBUG", "I": "INFO", "W": "WARN", "E": "ERROR", "F": "ERROR", "A": "ERROR"}


def _truth_level(name: str, row: dict[str, str]) -> str:
    if name == "Android":
        return _LETTERS[row["Level"]]
    if name == "BGL" and row["Label"] != "-":
        return "ERROR"  # an alert label is an alert (the format's rule, as Thunderbird's)
    return _LEVELS.get(row["Level"], row["Level"])


def _truth_component(row: dict[str, str]) -> str:
    return row.get("Component", row.get("Program", ""))


def field_accuracy(log: Path, truth: list[dict[str, str]]) -> dict[str, float | str]:
    name = log.name.split("_")[0]
    report = LogFileReport()
    by_line = {e.line_number: e for e in read_log_file(log, report=report)}
    hits: Counter[str] = Counter()
    levels = "Level" in truth[0]
    misses: dict[str, list[str]] = defaultdict(list)
    for row in truth:
        entry = by_line.get(int(row["LineId"]))
        if entry is None:
            misses["entry"].append(row["LineId"])
            continue
        checks = {
            "ts": _truth_ts(name, row)(entry),
            "component": entry.component == _truth_component(row),
            "message": entry.message.strip() == row["Content"].strip(),
        }
        if levels:
            checks["level"] = entry.level == _truth_level(name, row)
        for key, ok in checks.items():
            if ok:
                hits[key] += 1
            elif len(misses[key]) < 3:
                misses[key].append(f"{row['LineId']}: got {getattr(entry, key)!s:.60} want {row}")
    result: dict[str, float | str] = {"format": report.format}
    for key in ("ts", "level", "component", "message"):
        if key == "level" and not levels:
            result[key] = "n/a"
        else:
            result[key] = hits[key] / len(truth)
    for key, examples in misses.items():
        for example in examples[:2]:
            print(f"    miss {key}: {example[:300]}", file=sys.stderr)
    return result


def grouping_accuracy(truth: list[dict[str, str]], *, sim_th: float = SIM_TH, depth: int = DEPTH) -> float:
    miner = TemplateMiner(sim_th=sim_th, depth=depth)
    return _accuracy([miner.add(row["Content"]) for row in truth], truth)


def _accuracy(mined: list[int], truth: list[dict[str, str]]) -> float:
    events = [row["EventId"] for row in truth]
    event_size = Counter(events)
    groups: dict[int, list[int]] = defaultdict(list)
    for index, template_id in enumerate(mined):
        groups[template_id].append(index)
    correct = 0
    for members in groups.values():
        ids = {events[i] for i in members}
        if len(ids) == 1 and event_size[next(iter(ids))] == len(members):
            correct += len(members)
    return correct / len(truth)


def stock_drain_accuracy(truth: list[dict[str, str]]) -> float:
    """The same measure for drain3 as shipped (no masking, sim_th 0.4, depth 4): the baseline."""
    from drain3.drain import Drain

    drain = Drain()
    return _accuracy([drain.add_log_message(row["Content"])[0].cluster_id for row in truth], truth)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dir", nargs="?", type=Path, default=SAMPLES)
    parser.add_argument("--sweep", action="store_true", help="also try sim_th 0.3-0.7 and depth 3-6")
    args = parser.parse_args()
    logs = sorted(args.dir.glob("*_2k.log"))
    print(f"{'file':<18}{'format':<14}{'ts':>7}{'level':>7}{'comp':>7}{'msg':>7}{'GA':>7}{'drain3':>8}")
    for log in logs:
        with (log.parent / f"{log.name}_structured.csv").open(encoding="utf-8", newline="") as handle:
            truth = list(csv.DictReader(handle))
        fields = field_accuracy(log, truth)
        ga = grouping_accuracy(truth)
        cells = [f"{v:>7.3f}" if isinstance(v, float) else f"{v:>7}" for k, v in fields.items() if k != "format"]
        print(
            f"{log.name.removesuffix('_2k.log'):<18}{fields['format']!s:<14}{''.join(cells)}{ga:>7.3f}{stock_drain_accuracy(truth):>8.3f}"
        )
        if args.sweep:
            for depth in (3, 4, 5, 6):
                row = [f"{grouping_accuracy(truth, sim_th=th, depth=depth):.3f}" for th in (0.3, 0.4, 0.5, 0.6, 0.7)]
                print(f"    depth {depth} sim_th 0.3..0.7: {' '.join(row)}")


if __name__ == "__main__":
    main()
