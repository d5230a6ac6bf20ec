"""Gaps the pipeline knows from its own records (issue 27 D7), whatever any engine wrote.

A failed tool call (a backend down, a timeout) and a named service no call read data for are
facts of the session, not of the Executor's report: a model Executor may leave them out, and
an answer that does not say them reads as if everything was checked. They are worded here by
code, added to the Composer input's gaps on every verdict, and the composer guard refuses an
answer that leaves one out (``composer.known_gap``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from veridiag.contracts.composer import KnownGap
from veridiag.contracts.invocation import InvocationRecord
from veridiag.contracts.material import ExecutorScope
from veridiag.pipeline.composer_input import composer_wording

#: Arguments that say when, not what: left out of a gap's wording (the scope line says when).
_WHEN = frozenset({"start", "end", "at"})


@dataclass(frozen=True)
class SessionGaps:
    """The known gaps, and the named services without data (for the scope line)."""

    gaps: list[KnownGap]
    without_data: tuple[str, ...]


def known_gaps(
    lang: str,
    invocations: Sequence[InvocationRecord],
    *,
    named: Sequence[str],
    scope: ExecutorScope | None,
) -> SessionGaps:
    """``invocations``: the final round's calls. A call is a gap when it failed and no later call
    with the same tool and arguments succeeded. A named service is without data when the
    Executor's scope says so, or — an Executor that states no scope — when no call naming it
    returned data."""
    words = composer_wording().gaps["zh" if lang == "zh" else "en"]
    gaps: list[KnownGap] = []
    succeeded = {_key(r) for r in invocations if r.status == "ok"}
    for record in invocations:
        if record.status != "error" or _key(record) in succeeded:
            continue
        args = _arguments(record)
        reason = (record.error or record.output or "").strip().split("\n")[-1][:200]
        template = words.failed_call if args else words.failed_call_plain
        gaps.append(
            KnownGap(text=template.format(tool=record.tool_name, args=args, reason=reason), subject=record.tool_name)
        )
    if scope is not None and (scope.examined or scope.without_data):
        without = [s for s in dict.fromkeys([*named, *scope.without_data]) if s in scope.without_data]
    else:
        read = {s for r in invocations if r.status == "ok" for s in _services(r)}
        without = [s for s in dict.fromkeys(named) if s not in read]
    gaps += [KnownGap(text=words.without_data.format(service=s), subject=s) for s in without]
    unique = {gap.text: gap for gap in gaps}
    return SessionGaps(list(unique.values()), tuple(without))


def _arguments(record: InvocationRecord) -> str:
    return ", ".join(f"{k}={v}" for k, v in record.arguments.items() if k not in _WHEN and v not in (None, "", []))


def _key(record: InvocationRecord) -> tuple[str, str]:
    return record.tool_name, _arguments(record)


def _services(record: InvocationRecord) -> list[str]:
    """The services a call's arguments name (``service``, or a ``services`` list)."""
    named = record.arguments.get("service")
    many = record.arguments.get("services")
    found = [named] if isinstance(named, str) else []
    if isinstance(many, list):
        found += [s for s in many if isinstance(s, str)]
    return found
