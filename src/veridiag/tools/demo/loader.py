"""Reads the demo environment's files: the bundled ``environment.yaml`` and incident folders,
plus a folder of extra incidents — adding an incident is adding a folder, no Python.

Each file is validated by its schema, then against the others (a template's placeholders, the
series an incident shapes, times inside the day, unique ids); every error names the file, the
line and the field.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import time
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel

from veridiag.text.yaml_files import located, parse_yaml, validate_yaml
from veridiag.tools.demo.environment import DemoEnvironment
from veridiag.tools.demo.schema import Counter, Day, EnvironmentFile, IncidentFile, Line, LogPattern, Placeholder

INCIDENT_FILE = "incident.yaml"

File = TypeVar("File", bound=BaseModel)


class DemoDataError(ValueError):
    """A demo data file that cannot be used: the file, the line, the field and why."""


@dataclass(frozen=True)
class _Parsed:
    """A validated file with what locates its fields for a later error."""

    origin: str
    node: yaml.Node | None

    def error(self, loc: tuple[int | str, ...], message: str) -> DemoDataError:
        return DemoDataError(located(self.origin, self.node, loc, message, whole="file"))


def _read(file: Traversable, model: type[File]) -> tuple[File, _Parsed]:
    origin = str(file)
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DemoDataError(f"{origin}: not UTF-8 (byte {exc.start})") from None
    except OSError as exc:
        raise DemoDataError(f"{origin}: {exc.strerror or exc}") from None
    data, node = parse_yaml(text, origin, DemoDataError)
    return validate_yaml(model, data, node, origin, DemoDataError, whole="file"), _Parsed(origin, node)


def _incident_files(folder: Traversable) -> list[Traversable]:
    """``folder``'s incident file if it is an incident folder, else those of its subfolders."""
    if folder.joinpath(INCIDENT_FILE).is_file():
        return [folder.joinpath(INCIDENT_FILE)]
    if not folder.is_dir():
        raise DemoDataError(f"{folder}: no such folder")
    files = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.is_dir() or entry.name.startswith((".", "_")):
            continue
        if not entry.joinpath(INCIDENT_FILE).is_file():
            raise DemoDataError(f"{entry}: an incident folder needs an {INCIDENT_FILE}")
        files.append(entry.joinpath(INCIDENT_FILE))
    if not files:
        raise DemoDataError(f"{folder}: no incident folder (a folder with an {INCIDENT_FILE}) in it")
    return files


def _check_patterns(
    patterns: list[LogPattern], placeholders: dict[str, Placeholder], day: Day, parsed: _Parsed
) -> None:
    for index, pattern in enumerate(patterns):
        try:
            names = pattern.placeholder_names()
        except ValueError as exc:
            raise parsed.error(("logs", index, "template"), str(exc)) from None
        unknown = sorted(set(names) - set(placeholders))
        if unknown:
            known = ", ".join(placeholders) or "none"
            raise parsed.error(("logs", index, "template"), f"unknown placeholder {{{unknown[0]}}} (known: {known})")
        _check_window(pattern.window, day, parsed, ("logs", index, "window"))


def _inside(clock: time, day: Day) -> bool:
    return day.start.time() <= clock <= day.end.time()


def _outside(day: Day) -> str:
    return f"outside the demo day ({day.start:%H:%M}–{day.end:%H:%M})"


def _check_window(window: tuple[time, time] | None, day: Day, parsed: _Parsed, loc: tuple[int | str, ...]) -> None:
    if window is not None and not (_inside(window[0], day) and _inside(window[1], day)):
        raise parsed.error(loc, _outside(day))


def _check_incident(
    incident: IncidentFile, parsed: _Parsed, shop: EnvironmentFile, series: set[tuple[str, str]]
) -> None:
    day = shop.day
    _check_window(incident.window, day, parsed, ("window",))
    for name in incident.placeholders:
        if name in shop.placeholders:
            raise parsed.error(("placeholders", name), "environment.yaml already defines this placeholder")
    _check_patterns(incident.logs, {**shop.placeholders, **incident.placeholders}, day, parsed)
    for index, item in enumerate(incident.metrics):
        if (item.service, item.metric) not in series:
            message = f"no series {item.metric} of {item.service} (add it under series: here or in environment.yaml)"
            raise parsed.error(("metrics", index, "metric"), message)
        _check_window(item.window, day, parsed, ("metrics", index, "window"))
        start, end = item.window or incident.window
        for number, event in enumerate(item.shape.events if isinstance(item.shape, Counter) else []):
            if not start <= event <= end:  # a counter counts inside its window, or at its end
                message = f"a counter's event must lie in its window ({start:%H:%M}–{end:%H:%M}, end included)"
                raise parsed.error(("metrics", index, "shape", "events", number), message)
    single: tuple[tuple[str, Sequence[Line]], ...] = (("lines", incident.lines), ("changes", incident.changes))
    for field, entries in single:
        for index, entry in enumerate(entries):
            if not _inside(entry.at, day):
                raise parsed.error((field, index, "at"), _outside(day))


def _declared_series(files: list[tuple[EnvironmentFile | IncidentFile, _Parsed]]) -> set[tuple[str, str]]:
    """Every series the files declare; one declared twice is an error naming both files."""
    owners: dict[tuple[str, str], str] = {}
    for file, parsed in files:
        for index, series in enumerate(file.series):
            key = (series.service, series.metric)
            if key in owners:
                raise parsed.error(
                    ("series", index), f"{series.metric} of {series.service} is already in {owners[key]}"
                )
            owners[key] = parsed.origin
    return set(owners)


def load_environment(extra_incidents: Path | None = None) -> DemoEnvironment:
    """The bundled demo environment, plus the incidents in ``extra_incidents`` (an incident
    folder, or a folder of them), loaded after the bundled ones in the order of their windows."""
    bundled = resources.files("veridiag.tools.demo")
    shop, shop_parsed = _read(bundled.joinpath("environment.yaml"), EnvironmentFile)
    _check_patterns(shop.logs, shop.placeholders, shop.day, shop_parsed)
    loaded: list[tuple[IncidentFile, _Parsed]] = []
    for source in (bundled.joinpath("incidents"), *([extra_incidents] if extra_incidents else [])):
        incidents = [_read(file, IncidentFile) for file in _incident_files(source)]
        loaded += sorted(incidents, key=lambda pair: (pair[0].window[0], pair[0].id))
    ids: dict[str, str] = {}
    for incident, parsed in loaded:
        if incident.id in ids:
            raise parsed.error(("id",), f"{incident.id!r} is already the id of {ids[incident.id]}")
        ids[incident.id] = parsed.origin
    series = _declared_series([(shop, shop_parsed), *loaded])
    for incident, parsed in loaded:
        _check_incident(incident, parsed, shop, series)
    return DemoEnvironment(shop, tuple(incident for incident, _parsed in loaded))


@cache
def bundled_environment() -> DemoEnvironment:
    """The bundled demo environment (read once per process)."""
    return load_environment()
