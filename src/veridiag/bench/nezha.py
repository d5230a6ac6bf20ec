"""The labelled Nezha fault injections (``shared/samples/nezha/``, see its README) as typed records.

A day folder is ``<system>-<YYYY-MM-DD>/`` with ``fault_list.json`` (hour → list of
``{inject_time, inject_timestamp, inject_pod, inject_type}``), ``metric/<pod>_metric.csv`` for
every pod, and on some days ``log/HH_MM_log.csv`` / ``trace/HH_MM_trace.csv`` for a few minutes.
The culprit service is ``inject_pod`` without its replica suffix; the injection moment is
``inject_time`` read as UTC (on the TrainTicket day ``inject_timestamp`` is about 8 h off it,
while ``inject_time`` matches the data).

Whether a fault *shows in the data* follows issue 26's rule: CPU faults in the metrics; code
faults (a wrong value returned, an exception thrown) in the logs, when the day's logs cover the
injection's minute; a network delay barely moves these metrics, so there the right answer is
that the evidence cannot tell.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from veridiag.ingest.kubernetes import workload_of

FaultType = Literal["cpu_contention", "cpu_consumed", "network_delay", "return", "exception"]
#: Where a fault can be seen in the day's data; ``nowhere``: the evidence cannot tell.
ShowsIn = Literal["metrics", "logs", "nowhere"]
CPU_FAULTS: frozenset[str] = frozenset({"cpu_contention", "cpu_consumed"})
CODE_FAULTS: frozenset[str] = frozenset({"return", "exception"})

#: ``inject_time`` as the dataset writes it (UTC, no zone in the text). One fixed layout of
#: the dataset's own, so strptime, not a guessing parser: a line in another layout is an error.
INJECT_TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
_DAY_FOLDER = re.compile(r"(?P<system>.+)-(?P<day>\d{4}-\d{2}-\d{2})")
_METRIC_FILE = re.compile(r"(?P<pod>.+)_metric\.csv")
_MINUTE_FILE = re.compile(r"(?P<hour>\d{2})_(?P<minute>\d{2})_(?P<kind>log|trace)\.csv")


class NezhaFormatError(ValueError):
    """A day folder that is not laid out as the dataset ships it; names the file."""


def service_of(pod: str) -> str:
    """The service a pod belongs to: its name without the replica suffix — the pod's workload,
    as the metric import names each pod's rows (``ingest/kubernetes.py``), so a culprit and the
    imported series always spell a service alike."""
    return workload_of(pod)


def shows_in(fault_type: FaultType, *, logs: bool) -> ShowsIn:
    """Issue 26's rule: where the injected fault is visible in what the day holds."""
    if fault_type in CPU_FAULTS:
        return "metrics"
    if fault_type in CODE_FAULTS and logs:
        return "logs"
    return "nowhere"


class _RawFault(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    inject_time: str
    inject_pod: str
    inject_type: FaultType


_FAULT_LIST = TypeAdapter(dict[str, list[_RawFault]])


class Fault(BaseModel):
    """One injection: what was done, where, when, and what data the day has around it."""

    model_config = ConfigDict(frozen=True)

    #: ``<system>-<day>#<n>``, n counting the day's injections in time order from 1.
    id: str
    system: str
    inject_time: datetime
    pod: str
    culprit: str
    fault_type: FaultType
    #: Metrics cover every fault; logs and traces only when the day has the injection's minute.
    has_logs: bool
    has_traces: bool
    shows_in: ShowsIn

    @property
    def inject_epoch(self) -> int:
        return int(self.inject_time.timestamp())


class PodMetrics(BaseModel):
    model_config = ConfigDict(frozen=True)

    pod: str
    service: str
    path: Path


class NezhaDay(BaseModel):
    """One day folder: its system, its faults in time order, its pods' metric files."""

    model_config = ConfigDict(frozen=True)

    folder: Path
    system: str
    day: date
    faults: list[Fault]
    metrics: list[PodMetrics]
    #: ``HH_MM`` of every minute the day's ``log/`` (``trace/``) folder has a file for.
    log_minutes: frozenset[str]
    trace_minutes: frozenset[str]

    @property
    def name(self) -> str:
        return f"{self.system}-{self.day.isoformat()}"

    @property
    def services(self) -> list[str]:
        """Every service the day has metrics for, sorted."""
        return sorted({pod.service for pod in self.metrics})


def read_day(folder: Path) -> NezhaDay:
    """One day folder (``<system>-<YYYY-MM-DD>``) read into typed records."""
    named = _DAY_FOLDER.fullmatch(folder.name)
    if named is None:
        raise NezhaFormatError(f"{folder}: a Nezha day folder is named <system>-<YYYY-MM-DD>")
    try:
        day = date.fromisoformat(named["day"])
    except ValueError:
        raise NezhaFormatError(f"{folder}: {named['day']!r} is not a date") from None
    system = named["system"]
    metrics = _metric_files(folder / "metric")
    log_minutes = _minutes(folder / "log", "log")
    trace_minutes = _minutes(folder / "trace", "trace")
    faults = []
    for number, (moment, raw) in enumerate(_fault_list(folder / "fault_list.json"), start=1):
        minute = moment.strftime("%H_%M")
        logs = minute in log_minutes
        faults.append(
            Fault(
                id=f"{system}-{day.isoformat()}#{number}",
                system=system,
                inject_time=moment,
                pod=raw.inject_pod,
                culprit=service_of(raw.inject_pod),
                fault_type=raw.inject_type,
                has_logs=logs,
                has_traces=minute in trace_minutes,
                shows_in=shows_in(raw.inject_type, logs=logs),
            )
        )
    return NezhaDay(
        folder=folder,
        system=system,
        day=day,
        faults=faults,
        metrics=metrics,
        log_minutes=log_minutes,
        trace_minutes=trace_minutes,
    )


def read_days(root: Path) -> list[NezhaDay]:
    """Every day folder under ``root`` (a folder holding ``fault_list.json``), by name."""
    folders = sorted(path.parent for path in root.glob("*/fault_list.json"))
    if not folders:
        raise NezhaFormatError(f"{root}: no Nezha day folder (<system>-<YYYY-MM-DD>/fault_list.json) here")
    return [read_day(folder) for folder in folders]


def _fault_list(path: Path) -> list[tuple[datetime, _RawFault]]:
    try:
        raw = _FAULT_LIST.validate_json(path.read_bytes())
    except OSError as exc:
        raise NezhaFormatError(f"{path}: {exc.strerror or exc}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise NezhaFormatError(f"{path}: {where}: {first['msg']}") from None
    faults = []
    for hour, entries in raw.items():
        for index, entry in enumerate(entries):
            try:
                moment = datetime.strptime(entry.inject_time, INJECT_TIME_FORMAT).replace(tzinfo=UTC)
            except ValueError:
                raise NezhaFormatError(
                    f"{path}: {hour}.{index}.inject_time: {entry.inject_time!r} is not YYYY-MM-DD HH:MM:SS"
                ) from None
            faults.append((moment, entry))
    # In time order whatever the file's order; the sort is stable, so two at one moment keep theirs.
    return sorted(faults, key=lambda pair: pair[0])


def _metric_files(folder: Path) -> list[PodMetrics]:
    if not folder.is_dir():
        raise NezhaFormatError(f"{folder}: no metric folder")
    pods = []
    for path in sorted(folder.iterdir()):
        found = _METRIC_FILE.fullmatch(path.name)
        if found and path.is_file():
            pods.append(PodMetrics(pod=found["pod"], service=service_of(found["pod"]), path=path))
    if not pods:
        raise NezhaFormatError(f"{folder}: no <pod>_metric.csv file")
    return pods


def _minutes(folder: Path, kind: str) -> frozenset[str]:
    if not folder.is_dir():
        return frozenset()
    minutes = set()
    for path in folder.iterdir():
        found = _MINUTE_FILE.fullmatch(path.name)
        if found and found["kind"] == kind and path.is_file():
            minutes.add(f"{found['hour']}_{found['minute']}")
    return frozenset(minutes)
