"""The Planner's output (docs/spec §0.4): what to look at, over which window, with which steps.

A plan is role output — it may come from a model — so the pipeline reads it once with
``Plan.read``: a plan that does not fit this shape is kept as ``unparsed`` text with no
steps, and the Executor then gathers nothing rather than guessing (fail closed).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated, Literal

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field, ValidationError, field_validator

from veridiag.contracts.json import JsonObject

ToolName = Literal["query_logs", "query_metrics", "query_changes", "lookup_knowledge", "rank_suspects", "query_traces"]


class Step(BaseModel):
    """One evidence call a skill asks for."""

    model_config = ConfigDict(extra="forbid")

    tool: ToolName
    #: Arguments as the catalogue writes them, ``{placeholders}`` filled from the plan.
    args: dict[str, str] = Field(default_factory=dict)
    #: ``query_metrics`` only: these metrics of the service, or every one ("discover").
    metrics: list[str] | Literal["discover"] | None = None
    #: Run only when the plan has this slot filled (``order_id``, ``terms``).
    when: Literal["order_id", "terms"] | None = None
    #: Look this much earlier than the question's window (a change comes before its effect).
    lookback_minutes: int = Field(default=0, ge=0, le=24 * 60)


class PlanTime(BaseModel):
    """How the window was read from the question, so a misreading can be shown and audited."""

    phrase: str | None = None
    kind: str = "recent_history"
    timezone: str = "UTC"
    anchor: str | None = None
    anchor_source: str | None = None
    #: A point in time asked about ("at 14:00"), inside its window.
    at: str | None = None


#: How far a diagnosis looks around a moment it is given: its window, a week of history before it
#: and a cause's lead before that, with room to spare.
GIVEN_REACH = timedelta(days=31)
_EARLIEST_GIVEN = datetime.min.replace(tzinfo=UTC) + GIVEN_REACH
_LATEST_GIVEN = datetime.max.replace(tzinfo=UTC) - GIVEN_REACH


def within_reach(moment: datetime) -> datetime:
    """A given moment a diagnosis can look around: one within ``GIVEN_REACH`` of the calendar's
    edge (years 1 and 9999 in UTC) leaves no room for its history or window, and each stage's
    arithmetic would overflow in turn."""
    try:
        utc = moment.astimezone(UTC)
    except OverflowError:
        utc = None
    if utc is None or not _EARLIEST_GIVEN <= utc <= _LATEST_GIVEN:
        raise ValueError("the time lies too near the calendar's edge (years 1 and 9999) to diagnose")
    return moment


#: A moment a diagnosis is anchored at (an alert's start).
ReachableTime = Annotated[AwareDatetime, AfterValidator(within_reach)]


class GivenTime(BaseModel):
    """A moment handed in with the question rather than read from its words (an alert's
    ``startsAt``): the planner anchors the window at it as it does "at 14:00", and the answer's
    scope line names ``source`` instead of a phrase of the question."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    at: ReachableTime
    #: How the moment was given, as the scope line shows it ("alert startsAt").
    source: str = Field(min_length=1, max_length=200)


class ReadAs(BaseModel):
    """A word of the question read as a service: one it nearly spells ("recomendationservice"), or
    one of its pods ("cartservice-579f59597d-wc2lz")."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    written: str = Field(max_length=200)
    service: str = Field(max_length=200)


IntentId = Literal["blame", "value", "count", "onset", "duration", "change", "rank", "cause", "abnormal"]


class Intent(BaseModel):
    """What kind of question it is, so the answer's first sentence answers that: why (``cause``),
    what is wrong (``abnormal``), which (``rank``: by a measure, or suspects of a fault), is X to
    blame (``blame``), when did it start (``onset``), what changed (``change``), how many or
    where is this text (``count``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: IntentId = "cause"
    #: ``rank``: the measure to rank by (latency, errors, cpu …); None ranks suspects of a fault.
    rank_by: str | None = Field(default=None, max_length=40)
    #: ``blame``: the service asked about (the first, when the question asks about several).
    about: str | None = Field(default=None, max_length=200)
    #: ``blame``: every service asked about, in order ("is it frontend or cartservice?"): each
    #: gets its own yes, no or cannot tell. ``about`` is the first of them.
    suspects: list[str] = Field(default_factory=list, max_length=20)
    #: ``count``: the level of the lines asked for ("WARNING 有哪些": WARN), when it names one.
    level: Literal["ERROR", "WARN"] | None = None
    #: The question speaks of something down or still going on: the latest incident comes first.
    recent: bool = False
    #: The words asking whether it is still happening ("还在报错吗", "still failing?"): without a
    #: time the newest hour of data is read, and the answer opens with whether it still is.
    still: str | None = Field(default=None, max_length=100)
    #: The words that asked it.
    phrase: str | None = Field(default=None, max_length=200)
    #: A kind of fault asked about yes or no ("is it the network?": network — a family of
    #: analysis/signatures.yaml), whatever else the question asks.
    kind_asked: str | None = Field(default=None, max_length=40)


class Plan(BaseModel):
    # A model's planner may add fields (``model_steps``); they are kept for the audit.
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    skill: str = "generic"
    skill_title: str = ""
    #: What kind of question it is (the answer's first sentence answers it).
    intent: Intent = Field(default_factory=Intent)
    service: str | None = None
    #: The services the question names exactly: checked, never assumed — the executor examines
    #: them with the services around them (or every service with data).
    services: list[str] = Field(default_factory=list)
    services_named_exactly: bool = False
    #: Services a word of the question points to by kind (支付 → a service named *pay*): a hint
    #: for which period to look at, never a limit on what is examined.
    pointed_services: list[str] = Field(default_factory=list)
    #: Names the question writes as services ("billing-service") that no data holds, and the
    #: infrastructure components it names that none does ("is it mysql?"): said first, and never
    #: answered yes or no about.
    unknown_services: list[str] = Field(default_factory=list)
    #: Words read as the service they nearly spell (a one-letter typo): the scope line says so.
    read_as: list[ReadAs] = Field(default_factory=list)
    order_id: str | None = None
    #: Words the question names that the logs are searched for as written: an error code, an
    #: exception, an identifier from the code ("onStandStepChanged"), a quoted phrase.
    terms: list[str] = Field(default_factory=list)
    start: str | None = None
    end: str | None = None
    explicit_time: bool = False
    time: PlanTime = Field(default_factory=PlanTime)
    runbook_terms: str = ""
    #: The question asks what followed a change of this kind ("发布后报错": deploy; change: any).
    after_change: str | None = None
    #: The words that asked it, as the scope line quotes them.
    after_change_phrase: str | None = None
    steps: list[Step] = Field(default_factory=list)
    #: The planner's raw text when it was not a plan.
    unparsed: str | None = None
    #: The engine that planned (audit only).
    planner_engine: str | None = Field(default=None, alias="_engine")

    @field_validator("start", "end")
    @classmethod
    def _iso_moment(cls, value: str | None) -> str | None:
        if value is not None:
            datetime.fromisoformat(value.replace("Z", "+00:00"))  # ValueError: not a plan
        return value

    @classmethod
    def read(cls, value: object, raw_text: str | None, engine: str) -> Plan:
        """``value`` is the planner's parsed JSON (None when it did not parse)."""
        if isinstance(value, dict):
            try:
                return cls.model_validate({**value, "_engine": engine})
            except ValidationError as error:
                detail = f"{error.error_count()} invalid field(s): {error.errors()[0]['loc']}"
                return cls.model_validate({"unparsed": f"{detail}; {(raw_text or '')[:2000]}", "_engine": engine})
        return cls.model_validate({"unparsed": (raw_text or "")[:2000], "_engine": engine})

    @property
    def examined_services(self) -> list[str]:
        """The services named, or the one service when only that was filled in."""
        return [s for s in self.services or ([self.service] if self.service else []) if s]

    def runnable_steps(self) -> list[Step]:
        """The steps whose condition holds (``when: order_id`` needs an order id, ``terms`` a term)."""
        return [s for s in self.steps if s.when is None or getattr(self, s.when)]

    def stored(self) -> JsonObject:
        """As the session row and the audit keep it: every slot, filled or null; steps as the
        catalogue writes them; ``unparsed`` only when there was something to keep."""
        data = self.model_dump(mode="json", by_alias=True, exclude={"steps", "unparsed"})
        data["steps"] = [step.model_dump(mode="json", exclude_none=True) for step in self.steps]
        if self.unparsed is not None:
            data["unparsed"] = self.unparsed
        return data
