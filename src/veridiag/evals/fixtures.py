"""The eval fixture format (a stable interface: extend only additively).

One YAML file per case; a directory is a suite. Unknown keys are errors — a typo in an
expectation must not make a case pass silently — and every error names the file, the
line and the field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from veridiag.contracts.invocation import InvocationStatus
from veridiag.contracts.json import JsonObject
from veridiag.contracts.verifier import ClaimVerification, Verdict
from veridiag.text.yaml_files import parse_yaml, validate_yaml

RawOutput = str | None


class FixtureError(ValueError):
    """A fixture that cannot be run: file, line and reason."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FixtureInvocation(_Strict):
    id: int = Field(gt=0, le=2**63 - 1)  # the store's integer ids are 64-bit
    tool_name: str
    arguments: JsonObject = Field(default_factory=dict)
    output: str = ""
    status: InvocationStatus = "ok"
    error: str | None = None
    retrieval_details: JsonObject | None = None
    session: str = Field(default="this", description="'this' (default) or any other name: another session.")


class Switch(_Strict):
    enabled: bool = True


class Retry(_Strict):
    max_rounds: int = Field(ge=1, le=5)


class CaseConfig(_Strict):
    gatekeeper: Switch = Switch()
    composer: Switch = Switch()
    structured_output_v2: Switch = Switch()
    retry: Retry | None = None


class LogData(_Strict):
    file: str
    service: str
    format: str = "auto"
    year: int | None = None
    #: Zone of the file's timestamps without an offset (default: the case's timezone).
    tz: str | None = None


class MetricData(_Strict):
    file: str
    service: str | None = None
    metric: str | None = None
    unit: str | None = None
    format: Literal["auto", "csv", "openmetrics", "prometheus-json"] = "auto"
    tz: str | None = None


class ChangeData(_Strict):
    file: str
    service: str | None = None
    tz: str | None = None


class CaseData(_Strict):
    """Files (relative to the case file) imported into a fresh embedded store for the case."""

    logs: list[LogData] = Field(default_factory=list)
    metrics: list[MetricData] = Field(default_factory=list)
    changes: list[ChangeData] = Field(default_factory=list)


class Expectations(_Strict):
    verdict: Verdict | None = None
    verdict_in: list[Verdict] | None = None
    not_verdict: Verdict | None = None
    parse_status: Literal["valid", "missing", "malformed"] | None = None
    gatekeeper_status: Literal["pass", "warn", "fail"] | None = None
    failed_rules_include: list[str] = Field(default_factory=list)
    failed_rules_exclude: list[str] = Field(default_factory=list)
    warnings_include: list[str] = Field(default_factory=list)
    claim_verification: dict[str, ClaimVerification] = Field(default_factory=dict)
    allowed_claims: list[str] | None = None
    blocked_claims: list[str] = Field(default_factory=list)
    answer_contains: list[str] = Field(default_factory=list)
    answer_not_contains: list[str] = Field(default_factory=list)
    answer_source: Literal["composer", "template"] | None = None
    rounds: int | None = None
    #: Regular expressions the answer must match (e.g. a time inside a labelled window).
    answer_matches: list[str] = Field(default_factory=list)
    #: Every number with a unit, time and code in the answer occurs in a cited output of the session.
    numbers_grounded: bool = False
    #: Claim types that must not be allowed (e.g. ``root_cause`` for a quiet period).
    no_claim_types: list[str] = Field(default_factory=list)
    #: At least this many allowed claims.
    min_allowed_claims: int | None = None


#: The ordinary mistakes a labelled false claim makes (``claim_truth``); a closed list.
MISTAKE_KINDS: tuple[str, ...] = (
    "wrong_number",
    "wrong_time",
    "wrong_entity",
    "overgeneralisation",
    "direction",
    "ratio",
    "interpretation",
    "cause_as_symptom",
    "planted_instruction",
    "swapped_id",
    "local_time_as_utc",
)


class ClaimTruth(_Strict):
    """Whether a claim of the Executor output is true of the recorded data; a false one names
    its mistake (one of ``MISTAKE_KINDS``). Read by the truth rates, never by expectations."""

    truth: bool
    mistake: str | None = None
    #: What the data really says, for a reviewer.
    note: str = ""

    @model_validator(mode="after")
    def _mistake_matches_truth(self) -> ClaimTruth:
        if self.mistake is not None and self.mistake not in MISTAKE_KINDS:
            raise ValueError(f"unknown mistake kind {self.mistake!r}: one of {', '.join(MISTAKE_KINDS)}")
        if self.truth and self.mistake is not None:
            raise ValueError("a true claim names no mistake")
        if not self.truth and self.mistake is None:
            raise ValueError(f"a false claim names its mistake: one of {', '.join(MISTAKE_KINDS)}")
        return self


class Case(_Strict):
    id: str = Field(min_length=1, pattern=r"^[\w.\-]+$")
    description: str = ""
    query: str = Field(min_length=1)
    lang: Literal["zh", "en"] | None = None
    invocations: list[FixtureInvocation] = Field(default_factory=list)
    executor_output: RawOutput = None
    executor_outputs: list[RawOutput] | None = None
    verifier_output: RawOutput | list[RawOutput] = None
    composer_output: RawOutput | list[RawOutput] = None
    config: CaseConfig = CaseConfig()
    expect: Expectations = Expectations()
    #: ``scripted`` (default): the given executor outputs; ``offline``: the offline engine plans,
    #: calls the tools on ``data`` and judges — the case is a question on real data.
    engine: Literal["scripted", "offline"] = "scripted"
    data: CaseData | None = None
    #: The zone questions are asked in (``timezone`` setting).
    timezone: str = "UTC"
    #: Where the case's data comes from and under which licence.
    source: str = ""
    #: Per claim id of the (final) Executor output: true or false, and a false claim's mistake.
    #: A labelled case reports the truth rates (faithful kept, mistakes caught).
    claim_truth: dict[str, ClaimTruth] = Field(default_factory=dict)
    path: Path | None = Field(default=None, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _one_executor(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        given = ("executor_output" in data) + ("executor_outputs" in data)
        if data.get("engine") == "offline":
            if given:
                raise ValueError("an offline case runs the offline executor: give no executor_output(s)")
        elif given != 1:
            raise ValueError("give exactly one of executor_output (one round) or executor_outputs (one per round)")
        return data

    @model_validator(mode="after")
    def _unique_ids(self) -> Case:
        ids = [invocation.id for invocation in self.invocations]
        if len(ids) != len(set(ids)):
            raise ValueError(f"invocation ids repeat: {sorted({i for i in ids if ids.count(i) > 1})}")
        return self

    @property
    def rounds(self) -> list[RawOutput]:
        return self.executor_outputs if self.executor_outputs is not None else [self.executor_output]


def load_case(path: Path) -> Case:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise FixtureError(f"{path}: not UTF-8 (byte {exc.start})") from None
    except OSError as exc:
        raise FixtureError(f"{path}: {exc.strerror}") from None
    data, node = parse_yaml(text, str(path), FixtureError)
    if not isinstance(data, dict):
        raise FixtureError(f"{path}:1: a case is a mapping with id, query, executor_output and expect")
    case = validate_yaml(Case, data, node, str(path), FixtureError, whole="case")
    case.path = path
    return case


def load_suite(paths: list[Path]) -> list[Case]:
    """Cases from files and directories (``*.yaml`` / ``*.yml``, recursively), ids unique."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.suffix in {".yaml", ".yml"})
        elif path.exists():
            files.append(path)
        else:
            raise FixtureError(f"{path}: no such file or directory")
    cases = [load_case(file) for file in files]
    seen: dict[str, Path | None] = {}
    for case in cases:
        if case.id in seen:
            raise FixtureError(f"{case.path}: id {case.id!r} is already used by {seen[case.id]}")
        seen[case.id] = case.path
    return cases
