"""The demo environment's files as pydantic models: ``environment.yaml`` (the shop's ordinary
day) and one ``incident.yaml`` per incident folder.

Strict (an unknown key is an error), so a typo fails at load instead of making a quieter demo.
What a file refers to elsewhere — placeholders, series, the day — is checked by the loader,
which knows both files. Shapes and random values carry their own drawing code: the files
describe them, this module says what each description means.
"""

from __future__ import annotations

import random
import string
from datetime import UTC, datetime, time
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, AwareDatetime, BaseModel, BeforeValidator, ConfigDict, Field, model_validator

Level = Literal["DEBUG", "INFO", "WARN", "ERROR"]
Name = Annotated[str, Field(min_length=1, pattern=r"^\S+$")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _quoted_clock(value: Any) -> Any:
    # YAML 1.1 reads an unquoted 10:00 as the number 600, which pydantic would take as seconds.
    if not isinstance(value, str | time):
        raise ValueError('write a time of day quoted, "HH:MM" or "HH:MM:SS" (YAML reads an unquoted 10:00 as 600)')
    return value


#: A time of day on the demo day.
Clock = Annotated[time, BeforeValidator(_quoted_clock)]


def _ordered(window: tuple[time, time]) -> tuple[time, time]:
    if window[0] >= window[1]:
        raise ValueError("a window's start must come before its end")
    return window


#: ``[start, end)`` on the demo day.
Window = Annotated[tuple[Clock, Clock], AfterValidator(_ordered)]


# -- random values for {placeholders} in log templates ---------------------------------------


class IntegerValue(_Strict):
    """An integer in ``[low, high]``, written into ``format`` (``u{}`` → ``u4331``)."""

    kind: Literal["integer"]
    low: int
    high: int
    format: str = "{}"

    @model_validator(mode="after")
    def _valid(self) -> IntegerValue:
        if self.low > self.high:
            raise ValueError("low must not exceed high")
        try:
            usable = self.format.count("{}") == 1 and bool(self.format.format(0))
        except (ValueError, IndexError, KeyError):
            usable = False
        if not usable:
            raise ValueError("format needs exactly one {} where the number goes (and no other braces)")
        return self

    def draw(self, rng: random.Random) -> str:
        return self.format.format(rng.randint(self.low, self.high))


class DecimalValue(_Strict):
    """A number uniformly in ``[low, high]`` with ``decimals`` digits after the point."""

    kind: Literal["decimal"]
    low: float
    high: float
    decimals: int = Field(default=1, ge=0, le=6)

    def draw(self, rng: random.Random) -> str:
        return f"{rng.uniform(self.low, self.high):.{self.decimals}f}"


class ChoiceValue(_Strict):
    """One of ``options`` (repeat an option to make it likelier)."""

    kind: Literal["choice"]
    options: list[str] = Field(min_length=1)

    def draw(self, rng: random.Random) -> str:
        return rng.choice(self.options)


class HexValue(_Strict):
    """``bits`` random bits as fixed-width hex (a trace id)."""

    kind: Literal["hex"]
    bits: int = Field(gt=0, le=256, multiple_of=4)

    def draw(self, rng: random.Random) -> str:
        return f"{rng.getrandbits(self.bits):0{self.bits // 4}x}"


Placeholder = Annotated[IntegerValue | DecimalValue | ChoiceValue | HexValue, Field(discriminator="kind")]


# -- metric shapes inside an incident's window -----------------------------------------------


class Ramp(_Strict):
    """Rise from ``low`` to ``high`` over the first fifth of the window, hold, fall back over
    the last tenth; every point scaled by a random factor in ``[1 - jitter, 1]``."""

    kind: Literal["ramp"]
    low: float
    high: float
    jitter: float = Field(default=0.1, ge=0, le=1)

    def value(self, progress: float, window: tuple[datetime, datetime], rng: random.Random) -> float:
        level = min(1.0, progress * 5) if progress < 0.9 else max(0.0, (1 - progress) * 10)
        return self.low + (self.high - self.low) * level * rng.uniform(1 - self.jitter, 1.0)


class Sawtooth(_Strict):
    """``teeth`` climbs from ``low`` to ``high``, each dropping back at once (a leak that is
    restarted), plus uniform noise of ``± noise``."""

    kind: Literal["sawtooth"]
    low: float
    high: float
    teeth: int = Field(ge=1)
    noise: float = Field(default=15, ge=0)

    def value(self, progress: float, window: tuple[datetime, datetime], rng: random.Random) -> float:
        phase = (progress * self.teeth) % 1.0
        return self.low + (self.high - self.low) * phase + rng.uniform(-self.noise, self.noise)


class Counter(_Strict):
    """How many of ``events`` (times of day, inside the window or at its end) have happened: a
    restart counter. A counter never goes down unless its process resets it, so it does not end
    with its window: from the window's start to the end of the day it holds what it counted
    (an event at the window's end is counted then), added to the other counters of its series
    (``DemoEnvironment.metrics``)."""

    kind: Literal["counter"]
    events: list[Clock] = Field(min_length=1)

    def value(self, progress: float, window: tuple[datetime, datetime], rng: random.Random) -> float:
        start, end = window
        return float(self.count(start + (end - start) * progress, window))

    def count(self, now: datetime, window: tuple[datetime, datetime]) -> int:
        """Events at or before ``now`` (any time from the window's start on)."""
        day = window[0]
        return sum(day.replace(hour=e.hour, minute=e.minute, second=e.second) <= now for e in self.events)


class Steps(_Strict):
    """The window cut into equal parts, one level each (one level: a flat line)."""

    kind: Literal["steps"]
    levels: list[float] = Field(min_length=1)

    def value(self, progress: float, window: tuple[datetime, datetime], rng: random.Random) -> float:
        return self.levels[min(len(self.levels) - 1, int(progress * len(self.levels)))]


Shape = Annotated[Ramp | Sawtooth | Counter | Steps, Field(discriminator="kind")]


# -- the files' entries -----------------------------------------------------------------------


class Series(_Strict):
    """A metric series: one point a minute all day, uniformly in ``baseline`` (low, high)."""

    service: Name
    metric: Name
    unit: str
    baseline: tuple[float, float]
    decimals: int = Field(default=1, ge=0, le=6)

    @model_validator(mode="after")
    def _valid(self) -> Series:
        if self.baseline[0] > self.baseline[1]:
            raise ValueError("baseline is [low, high]: low must not exceed high")
        return self


class SeriesShape(_Strict):
    """What a series does during the incident (``window`` defaults to the incident's)."""

    service: Name
    metric: Name
    shape: Shape
    window: Window | None = None


class LogPattern(_Strict):
    """Lines from ``template`` at ``per_minute`` on average (a fraction is the chance of one
    more line), at random milliseconds; ``{name}`` takes a random value of that placeholder."""

    service: Name
    level: Level
    template: str = Field(min_length=1)
    per_minute: float = Field(ge=0)
    window: Window | None = None

    def placeholder_names(self) -> list[str]:
        """The ``{name}``s the template uses; ValueError for braces that are no placeholder."""
        names = []
        for _text, name, spec, conversion in string.Formatter().parse(self.template):
            if name is None:
                continue
            if not name or spec or conversion:
                raise ValueError("write a placeholder as {name}, without a format spec or conversion")
            names.append(name)
        return names


class Line(_Strict):
    """One log line at a given second."""

    at: Clock
    service: Name
    level: Level
    text: str = Field(min_length=1)


class Change(Line):
    """A deploy, configuration change, release or job as the change feed records it; the
    service also logs ``text``, and the feed's description is its message."""

    kind: Name
    level: Level = "INFO"


def _utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC)


#: An instant with its offset, held in UTC (what every stored timestamp is).
Instant = Annotated[AwareDatetime, AfterValidator(_utc)]


class Day(_Strict):
    start: Instant
    end: Instant

    @model_validator(mode="after")
    def _one_day(self) -> Day:
        if self.start >= self.end or self.start.date() != self.end.date():
            raise ValueError("the day starts before it ends, on one date (times of day are read on it)")
        return self


class EnvironmentFile(_Strict):
    """``environment.yaml``: the shop's ordinary day."""

    day: Day
    seed: int
    placeholders: dict[Name, Placeholder] = Field(default_factory=dict)
    series: list[Series] = Field(default_factory=list)
    #: Lines written all day (a pattern's own ``window`` narrows it).
    logs: list[LogPattern] = Field(default_factory=list)


class IncidentFile(_Strict):
    """``incidents/<id>/incident.yaml``: one incident of the day."""

    id: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9-]*$")]
    title: str = Field(min_length=1)
    title_zh: str = Field(min_length=1)
    window: Window
    #: Questions people would ask about it (zh and en); the API benchmark asks them.
    questions: list[str] = Field(min_length=1)
    root_cause: str = Field(min_length=1)
    #: Random values of its own templates, beside the environment's (new names only).
    placeholders: dict[Name, Placeholder] = Field(default_factory=dict)
    #: Series the environment does not have (a new service's), with their all-day baseline.
    series: list[Series] = Field(default_factory=list)
    metrics: list[SeriesShape] = Field(default_factory=list)
    #: Generated lines (a pattern's ``window`` defaults to the incident's).
    logs: list[LogPattern] = Field(default_factory=list)
    lines: list[Line] = Field(default_factory=list)
    changes: list[Change] = Field(default_factory=list)
