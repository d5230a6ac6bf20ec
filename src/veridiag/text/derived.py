"""Facts a claim computed from the lines it quotes rather than copied from them, each checked by
computing it from the numbers of those lines.

No tool writes "two minutes later", "低了约 59 mph" or a bound every point of a series keeps: the
claim derived them. Looked up, a true one is never found; left unchecked, a wrong one passes. So
each is stated when the claim's own quoted lines compute it within the precision the claim writes
("约", "about", "roughly" widen it as ``entities`` reads them), and not otherwise: a derivation
that does not compute stays unconfirmed.

``derived`` is the one question entity grounding (the Gatekeeper) and the offline verifier both
ask of a fact they did not find, so the two agree. The words are data (``units.yaml``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from veridiag.text.bounds import threshold_kept
from veridiag.text.entities import Corpus, Entity, computed, derived_duration, extract_entities
from veridiag.text.tallies import tallied


def _no_periods() -> Sequence[int]:
    return ()


@dataclass(frozen=True)
class Cited:
    """What a claim's derived facts are computed from. ``periods`` is read only when a fact needs
    it (most claims copy their facts)."""

    #: The claim's own quoted lines, whole (None: it quotes no place of the output).
    own: Corpus | None
    #: The cited calls' outputs (a bound over a period is checked against every point of them).
    outputs: Sequence[str] = ()
    #: Seconds in each period the cited calls state as their own (``entities.period_lengths``).
    periods: Callable[[], Sequence[int]] = _no_periods
    #: The claim's facts (the subjects a per-host tally counts lines by); read from its text when not given.
    facts: Sequence[Entity] | None = field(default=None)


def derived(entity: Entity, claim_text: str, cited: Cited) -> bool:
    """Is ``entity``, a fact of ``claim_text`` its cited lines do not write, computed from them: a
    duration between two of their clocks or as long as a call's own period, a difference, the
    rounded end of a range, a bound kept by every point, a tally of the listed lines?"""
    own = cited.own
    if own is not None and (computed(entity, claim_text, own) or _timed(entity, claim_text, own, cited)):
        return True
    if entity.kind != "quantity":
        return False
    if threshold_kept(entity.text, claim_text, cited.outputs):
        return True
    facts = cited.facts if cited.facts is not None else extract_entities(claim_text)
    return tallied(entity, facts, cited.outputs)


def _timed(entity: Entity, claim_text: str, own: Corpus, cited: Cited) -> bool:
    """A duration as long as one of the calls' own periods ("the 6-hour window")."""
    if entity.kind != "quantity" or entity.dimension != "time":
        return False
    periods = cited.periods()
    return bool(periods) and derived_duration(entity, claim_text, own, periods)
