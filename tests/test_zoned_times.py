"""Zoned times are compared as instants (issue 27, deliverables 1 and 3): a claim's clock written
with its zone in any form, before or after it, in either script, is the instant it names, and
an output's clocks are read in the zone the output or the line states. Each property generates
the forms and asserts both directions: the true instant is kept, a shifted one or a wall clock
called by the wrong zone is caught, and a zone the words do not pin confirms nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path
from zoneinfo import ZoneInfo

from hypothesis import assume, example, given
from hypothesis import strategies as st

from tests.builders import SESSION, binding, claim, invocation, v2
from veridiag.agents.offline.verifier import OfflineVerifier
from veridiag.contracts import InMemoryInvocations
from veridiag.contracts.material import ExecutorMaterial
from veridiag.gatekeeper import Gatekeeper
from veridiag.gatekeeper.rules.entity_grounding import ZONE_UNPINNED
from veridiag.text.entities import ZONE_HINT, Corpus, Entity, extract_entities
from veridiag.text.when import _when_words
from veridiag.text.wordfiles import bundled_words
from veridiag.text.zones import named_zones

_CN = "零一二三四五六七八九十"
_GATEKEEPER = Gatekeeper()
_DAY = datetime(2026, 2, 19, tzinfo=UTC)


def _stated(claim_text: str, output: str) -> tuple[bool, bool]:
    """(every fact of the claim is in the output, in a reading its words pin)."""
    corpus = Corpus([output])
    facts = extract_entities(claim_text)
    assert facts, claim_text
    return all(corpus.contains(f) for f in facts), all(corpus.pins(f) for f in facts)


def _offset_names(hours: int) -> list[str]:
    """Every way the claim vocabulary writes UTC+hours."""
    sign = "+" if hours >= 0 else "-"
    names = [f"UTC{sign}{abs(hours)}", f"GMT{sign}{abs(hours)}", f"(UTC{sign}{abs(hours):02d}:00)"]
    if 0 < abs(hours) <= 12:
        side = "东" if hours > 0 else "西"
        names.append(side + (_CN[abs(hours)] if abs(hours) <= 10 else str(abs(hours))) + "区")
    if hours == 8:
        names += ["北京时间", "Beijing time", "东八区", "CST (UTC+8)", "中国时间"]
    return names


def _clock(moment: datetime, form: str) -> str:
    if form == "12h":
        return f"{moment.hour % 12 or 12}:{moment.minute:02d} {'pm' if moment.hour >= 12 else 'am'}"
    return f"{moment.hour:02d}:{moment.minute:02d}"


@st.composite
def _zoned_claims(draw: st.DrawFn) -> tuple[str, str, str, datetime]:
    """(true claim, the claim with its clock an hour or more off, the UTC wall clock called by the
    zone, the instant) for a random instant, offset, zone spelling, clock form and word order."""
    instant = _DAY + timedelta(minutes=draw(st.integers(0, 24 * 60 - 1)))
    hours = draw(st.integers(-11, 14).filter(bool))
    zone = draw(st.sampled_from(_offset_names(hours)))
    form = draw(st.sampled_from(["24h", "12h"]))
    shift = draw(st.integers(1, 23))
    order = draw(st.sampled_from(["zone first", "zone after", "glued offset", "dated"]))
    local = instant + timedelta(hours=hours)
    sign = "+" if hours >= 0 else "-"

    def write(moment: datetime) -> str:
        clock = _clock(moment, form)
        if order == "zone first":
            return f"{zone} {clock} 网关开始超时"
        if order == "glued offset" and form == "24h" and hours > 0:
            return f"the gateway timed out at {clock}{sign}{abs(hours):02d}:00"
        if order == "dated":
            return f"{zone} {moment.month} 月 {moment.day} 日 {clock} 网关开始超时"
        return f"the gateway timed out at {clock} {zone}"

    return write(local), write(local + timedelta(hours=shift)), write(instant), instant


@given(_zoned_claims())
def test_a_clock_written_with_its_zone_is_the_instant_it_names(case: tuple[str, str, str, datetime]) -> None:
    true, shifted, utc_face, instant = case
    output = f"{instant:%Y-%m-%dT%H:%M}:10Z ERROR gateway upstream timeout status=504"
    assert _stated(true, output) == (True, True), true
    assert not _stated(shifted, output)[0], shifted
    assert not _stated(utc_face, output)[0], utc_face  # the output's wall clock called local time


@given(st.integers(0, 24 * 60 - 1), st.integers(-11, 14).filter(bool), st.sampled_from(["line", "clf", "header"]))
def test_an_output_clock_is_read_in_the_zone_it_states(minute: int, hours: int, form: str) -> None:
    instant = _DAY + timedelta(minutes=minute)
    local = instant + timedelta(hours=hours)
    sign, hh = ("+" if hours >= 0 else "-"), f"{abs(hours):02d}00"
    output = {
        "line": f"{local:%Y-%m-%d %H:%M:%S} {sign}{hh} ERROR gateway upstream timeout",
        "clf": f'10.0.0.7 - - [{local:%d/%b/%Y:%H:%M:%S} {sign}{hh}] "GET /api/cart HTTP/1.1" 504 0',
        "header": f"timezone: UTC{sign}{abs(hours)}\n{local:%Y-%m-%d %H:%M:%S} ERROR gateway upstream timeout",
    }[form]
    assert _stated(f"the gateway timed out at {instant:%H:%M} UTC", output) == (True, True), output
    assert not _stated(f"the gateway timed out at {local:%H:%M} UTC", output)[0], output  # the local face


@given(
    st.integers(1_000_000_000, 1_999_999_999),
    st.integers(-12, 14),
    st.sampled_from(["thunderbird", "bgl", "template"]),
    st.sampled_from(["{:%H:%M:%S} UTC", "{:%H:%M} UTC", "{:%H:%M:%S}Z", "UTC {:%H:%M:%S}"]),
)
@example(1131567055, -8, "thunderbird", "{:%H:%M:%S} UTC")
def test_a_lines_epoch_is_its_instant_and_its_clock_a_local_face(
    epoch: int, hours: int, form: str, claimed: str
) -> None:
    """A line that writes its epoch seconds and a clock: the epoch is the UTC instant, and a clock
    at another hour is the host's local face, which a claim may not call UTC."""
    instant = datetime.fromtimestamp(epoch, UTC)
    local = instant + timedelta(hours=hours)
    output = {
        "thunderbird": f"- {epoch} {local:%Y.%m.%d} tbird-admin1 {local:%b %d %H:%M:%S} local@tbird-admin1 sshd: error",
        "bgl": f"- {epoch} {local:%Y.%m.%d} R02-M1 {local:%Y-%m-%d %H:%M:%S} RAS KERNEL INFO cache error",
        "template": f"  1× INFO {instant:%Y-%m-%dT%H:%M:%SZ} sshd error\n"
        f"     e.g. - {epoch} {local:%b %d %H:%M:%S} sshd: error",
    }[form]
    if form == "template":  # its own UTC time stands beside the example line
        assert _stated("sshd failed at " + claimed.format(instant), output)[0], output
    faced = _stated("sshd failed at " + claimed.format(local), output)[0]
    assert faced == (local.strftime("%H:%M") == instant.strftime("%H:%M")), output


@given(
    st.integers(1_000_000_000, 1_999_999_999),
    st.integers(-11, 14).filter(bool),
    st.booleans(),
    st.integers(2, 50),
)
def test_an_epoch_on_a_line_is_the_instant_a_zoned_clock_names(epoch: int, hours: int, millis: bool, off: int) -> None:
    """HealthApp's "extendReportTimeStamp=1514039575000" is 14:32:55Z: "换算为 UTC+8 是 22:32:55" states
    it; a clock minutes off does not."""
    instant = datetime.fromtimestamp(epoch, UTC)
    written = f"{epoch}000" if millis else str(epoch)
    line = f"20171223-22:31:59:725|Step_LSC|30002312|timeStamp back,extendReportTimeStamp={written}"
    local = instant + timedelta(hours=hours)
    sign = "+" if hours > 0 else "-"
    zone = f"UTC{sign}{abs(hours)}"
    assert _stated(f"换算为 {zone} 是 {local:%H:%M:%S}", line)[0], (line, zone)
    assert not _stated(f"换算为 {zone} 是 {local + timedelta(minutes=off):%H:%M:%S}", line)[0], (line, zone)


@given(st.integers(0, 24 * 60 - 1), st.integers(1, 14), st.booleans())
def test_a_zone_belongs_to_the_clock_it_is_attached_to(minute: int, hours: int, local_first: bool) -> None:
    """Two clocks of one instant, each with its zone or one restating the other in brackets:
    the right pairing is kept, the swapped one caught."""
    instant = _DAY + timedelta(minutes=minute)
    local = instant + timedelta(hours=hours)
    output = f"{instant:%Y-%m-%dT%H:%M}:10Z ERROR gateway upstream timeout"

    def both(utc: datetime, other: datetime) -> list[str]:
        u, o = f"{utc:%H:%M}", f"{other:%H:%M}"
        first = f"{o} UTC+{hours} ({u} UTC)" if local_first else f"{u} UTC ({o} UTC+{hours})"
        return [first, f"{o} ({u} UTC)", f"{u} UTC {o} UTC+{hours}", f"UTC+{hours} {o}, UTC {u}"]

    for text in both(instant, local):
        assert _stated(text, output) == (True, True), text
    for text in both(local, instant):
        assert not _stated(text, output)[0], text


@given(st.integers(0, 24 * 60 - 30), st.integers(1, 29), st.sampled_from(["到", "-", " to ", " and ", " → ", "->"]))
def test_the_ends_of_a_range_share_its_zone(minute: int, length: int, joiner: str) -> None:
    start = _DAY + timedelta(minutes=minute)
    end = start + timedelta(minutes=length)
    output = f"{start:%Y-%m-%dT%H:%M}:05Z ERROR a\n{end:%Y-%m-%dT%H:%M}:05Z ERROR b"
    shifted = [m + timedelta(hours=8) for m in (start, end)]
    assert _stated(f"{shifted[0]:%H:%M}{joiner}{shifted[1]:%H:%M} 北京时间", output) == (True, True)
    assert _stated(f"北京时间 {shifted[0]:%H:%M}{joiner}{shifted[1]:%H:%M}", output) == (True, True)
    assert not _stated(f"北京时间 {start:%H:%M}{joiner}{end:%H:%M}", output)[0]


def _grounding(text: str, output: str) -> tuple[str, str]:
    store = InMemoryInvocations([invocation(394, output=output)])
    report = _GATEKEEPER.validate(
        v2([claim(text=text, bindings=[binding([394], output)])]), session_id=SESSION, invocations=store
    )
    (check,) = [
        c
        for t in report.claim_traces
        for c in t.checks
        if c.rule_id == "claim.entity_grounding" and c.target.endswith("claim_text")
    ]
    return check.outcome, check.reason


@given(
    st.integers(0, 24 * 60 - 1),
    st.sampled_from([8, -6, -5]),
    st.sampled_from(["the gateway timed out at {c} CST", "at {c}, UTC+8 reads the gateway timing out"]),
)
def test_a_zone_the_words_do_not_pin_is_at_most_an_inference(minute: int, hours: int, template: str) -> None:
    """ "CST" is China, US Central or Cuba; a zone attached to no clock may be any clock's: true in
    one reading, the claim warns (no REJECT, no PASS); true in none, it fails."""
    assume(hours == 8 or "CST" in template)
    instant = _DAY + timedelta(minutes=minute)
    output = f"{instant:%Y-%m-%dT%H:%M}:10Z ERROR gateway upstream timeout"
    outcome, reason = _grounding(template.format(c=f"{instant + timedelta(hours=hours):%H:%M}"), output)
    assert outcome == "warn" and reason.startswith(ZONE_UNPINNED), reason
    wrong = instant + timedelta(hours=hours, minutes=37)
    assert _grounding(template.format(c=f"{wrong:%H:%M}"), output)[0] == "fail"


@given(st.integers(-11, 14).filter(bool), st.integers(0, 1439), st.sampled_from(["{d} {c}", "{d}{c}", "{d} 的 {c}"]))
@example(14, 0, "{d} {c}")  # UTC+14 and UTC−10 give the same clocks: no sure day (found by a full run)
@example(-10, 21 * 60, "{d} {c}")
def test_the_date_of_a_zoned_clock_is_the_instants(hours: int, minute: int, joined: str) -> None:
    """ "UTC+14 2 月 20 日 00:00" is 10:00Z on the 19th: the date written beside a clock its zone
    concerns is read with it (one instant): its UTC day, or (beyond ±10 h, where two offsets give
    the same clocks) not at all — never the day as written to find in UTC outputs."""
    local = _DAY + timedelta(minutes=minute)
    zone = f"UTC{'+' if hours > 0 else '-'}{abs(hours)}"
    clock = joined.format(d=f"{local.month} 月 {local.day} 日", c=f"{local:%H:%M}")
    text = f"{zone} {clock} 网关开始超时"
    instant = local - timedelta(hours=hours)
    output = f"{instant:%Y-%m-%dT%H:%M}:05Z ERROR gateway upstream timeout"
    dates = [e for e in extract_entities(text) if e.kind == "date"]
    assert all(f"-{instant:%m-%d}" in e.needles and not e.alternatives for e in dates), (text, dates)
    assert all(Corpus([output]).contains(f) for f in extract_entities(text)), text


def _reader_zone_outcomes(
    named: str, text: str, output: str, question: str | None = None
) -> tuple[tuple[str, str], str]:
    """The Gatekeeper's grounding of ``text`` and the offline verifier's label for it, in an answer
    whose other claim is ``named`` (naming a zone, or not), to ``question``."""
    store = InMemoryInvocations([invocation(394, output=output)])
    claims = [claim("claim-1", named, [binding([394], output)]), claim("claim-2", text, [binding([394], output)])]
    report = _GATEKEEPER.validate(v2(claims), session_id=SESSION, invocations=store, question=question)
    (check,) = [
        c
        for t in report.claim_traces
        for c in t.checks
        if c.rule_id == "claim.entity_grounding" and c.target == "claims[1].claim_text"
    ]
    material = ExecutorMaterial.read({"claims": claims})
    zones = named_zones([*(c.claim_text for c in material.claims), question or ""])
    label, _why, _refs = OfflineVerifier(store).judge(material.claims[1], {394}, zones)
    return (check.outcome, check.reason), label


@given(
    st.integers(0, 24 * 60 - 1),
    st.integers(-11, 14).filter(bool),
    st.sampled_from(["24h", "12h"]),
    st.sampled_from(["峰值出现在 {c}", "the peak came at {c}", "{c} 延迟回落"]),
    st.integers(7, 23 * 60),
)
def test_a_clock_without_a_zone_may_be_in_the_zone_the_answer_names(
    minute: int, hours: int, form: str, template: str, off: int
) -> None:
    """An answer that names its reader's zone in one claim ("北京时间 12:45 …") writes the next
    clock in it without naming it again: true there, the claim is at most an inference (kept, not
    confirmed — its own words do not say so); true as written, confirmed as before; true in
    neither, it fails. Without a zone named anywhere, the zone's clock is no reading at all."""
    instant = _DAY + timedelta(minutes=minute)
    assume(off % (24 * 60) != (hours * 60) % (24 * 60))  # the wrong clock is no reading of the instant
    output = f"{instant:%Y-%m-%dT%H:%M}:10Z ERROR gateway upstream timeout"
    zone = _offset_names(hours)[0]
    local = instant + timedelta(hours=hours)
    named = f"{zone} {local:%H:%M} 网关开始超时"
    in_zone = template.format(c=_clock(local, form))
    (outcome, reason), label = _reader_zone_outcomes(named, in_zone, output)
    assert outcome == "warn" and reason.startswith(ZONE_UNPINNED), (in_zone, reason)
    assert label == "reasonable_inference", label
    as_written = template.format(c=_clock(instant, form))
    (outcome, reason), label = _reader_zone_outcomes(named, as_written, output)
    assert outcome == "pass" and label == "direct_observation", (as_written, reason, label)
    wrong = template.format(c=_clock(instant + timedelta(minutes=off), form))
    assert _reader_zone_outcomes(named, wrong, output)[0][0] == "fail", wrong
    unnamed = f"{instant:%H:%M} 网关开始超时"
    assert _reader_zone_outcomes(unnamed, in_zone, output)[0][0] == "fail", in_zone
    # ... unless the question names it: the answer is written for its reader
    asked = f"{zone} {_clock(local, form)} 左右网关是不是超时了？"
    (outcome, reason), label = _reader_zone_outcomes(unnamed, in_zone, output, asked)
    assert outcome == "warn" and reason.startswith(ZONE_UNPINNED) and label == "reasonable_inference", reason


def test_every_zone_word_is_seen_by_the_hint_that_gates_reading_zones() -> None:
    """A zone word the cheap hint misses is never read ("1:40 AM Pacific" stayed a bare 01:40):
    every word of ``when.yaml`` must hold one of the hint's forms."""
    words = _when_words()
    missed = [w for w in [*words.zones, *words.in_chinese_text, *words.ambiguous] if not ZONE_HINT.search(w)]
    assert not missed, missed


@given(st.integers(0, 24 * 60 - 2), st.integers(0, 59), st.integers(-11, 14).filter(bool))
def test_a_zoned_clock_to_the_minute_may_round_an_outputs_seconds(minute: int, second: int, hours: int) -> None:
    """ "until 1:40 AM PDT" for an output's last line at 08:39:58Z: a zoned clock rounds as a bare
    one does (the minute before, at :30 or later) — it was not found."""
    instant = _DAY + timedelta(minutes=minute, seconds=second)
    output = f"{instant:%Y-%m-%dT%H:%M:%S}Z ERROR gateway upstream timeout"
    rounded = (instant + timedelta(seconds=30)).replace(second=0)
    local = rounded + timedelta(hours=hours)
    text = f"{_offset_names(hours)[0]} {local:%H:%M} 网关开始超时"
    facts = [e for e in extract_entities(text) if e.kind == "timestamp"]
    assert facts and all(Corpus([output]).contains(f) for f in facts), (text, output)
    later = local + timedelta(minutes=1)
    text = f"{_offset_names(hours)[0]} {later:%H:%M} 网关开始超时"
    facts = [e for e in extract_entities(text) if e.kind == "timestamp"]
    assert facts and not all(Corpus([output]).contains(f) for f in facts), (text, output)


@given(st.integers(0, 20 * 60), st.integers(1, 12), st.sampled_from(["峰值出现在 {c}", "the peak came at {c}"]))
def test_a_reader_zone_clock_on_the_quoted_line_is_not_taken_for_the_same_face_elsewhere(
    minute: int, hours: int, template: str
) -> None:
    """ "14:29" in the Berlin the answer names, quoting "peak … at 12:29:00Z", while the output's
    points run on past 14:29Z: the quoted line states it (in the reader's zone, an inference), the
    point elsewhere that writes the same face in UTC does not make it "only elsewhere"."""
    instant = _DAY + timedelta(minutes=minute)
    local = instant + timedelta(hours=hours)
    quoted = f"anomaly 1: up; peak 1922 MB at {instant:%Y-%m-%dT%H:%M}:00Z"
    output = f"{quoted}\npoints:\n{local:%Y-%m-%dT%H:%M}:00Z 698 MB"
    store = InMemoryInvocations([invocation(394, output=output)])
    zone = _offset_names(hours)[0]
    claims = [
        claim("claim-1", f"{zone} {local:%H:%M} 内存到顶", [binding([394], quoted)]),
        claim("claim-2", template.format(c=f"{local:%H:%M}"), [binding([394], quoted)]),
    ]
    report = _GATEKEEPER.validate(v2(claims), session_id=SESSION, invocations=store)
    (check,) = [
        c
        for t in report.claim_traces
        for c in t.checks
        if c.rule_id == "claim.entity_grounding" and c.target == "claims[1].claim_text"
    ]
    assert check.outcome == "warn" and check.reason.startswith(ZONE_UNPINNED), check.reason


@given(st.integers(0, 23), st.integers(0, 59), st.sampled_from(["{h:02d}:{m:02d} 时已经恢复", "{h:02d}:{m:02d}时报错"]))
def test_a_digital_clock_before_shi_is_that_clock(hour: int, minute: int, form: str) -> None:
    """ "12:10 时" is the clock 12:10 and then 时 ("at"): its minutes are no clock word "10 时"."""
    stamps = [e for e in extract_entities(form.format(h=hour, m=minute)) if e.kind == "timestamp"]
    assert [e.needles[-1] for e in stamps] == [f"{hour:02d}:{minute:02d}"]


_ABBREVIATIONS: dict[str, list[int]] = json.loads(
    resources.files("veridiag.text").joinpath("zone_abbreviations.json").read_text("utf-8")
)


def _when_words_listed() -> set[str]:
    # the hand-written list, before the database's words
    words = bundled_words("veridiag.text", "when.yaml", type(_when_words()))
    return {*words.zones, *words.in_chinese_text, *words.ambiguous}


def test_the_abbreviations_are_the_tz_databases() -> None:
    """``zone_abbreviations.json`` is what ``scripts/zone_abbreviations.py`` reads from the tzdata
    package today (a hand list missed HST, MSK, AEDT, WIB …)."""
    script = Path(__file__).resolve().parent.parent / "scripts" / "zone_abbreviations.py"
    done = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


@given(
    name=st.sampled_from(sorted(n for n, o in _ABBREVIATIONS.items() if n not in _when_words_listed())),
    minute=st.integers(0, 24 * 60 - 1),
    form=st.sampled_from(["at {t} {z}", "{z} {t} 达到峰值", "the same moment is {t} {z}.", "（{z}）{t} 报错"]),
)
def test_a_clock_with_a_tz_abbreviation_is_the_instant_it_names(name: str, minute: int, form: str) -> None:
    """ "13:03:11 MSK", "HST 凌晨 12:11": the abbreviation's offset (each of them, when it has stood
    for several: then no more than an inference), never the wall clock as UTC."""
    offsets = [o for o in _ABBREVIATIONS[name] if o % 60 == 0]
    assume(offsets and 0 not in offsets)
    clock = f"{minute // 60:02d}:{minute % 60:02d}"
    text = form.format(t=clock, z=name)
    (stamp,) = [e for e in extract_entities(text) if e.kind == "timestamp"]
    for offset in offsets:
        utc = _DAY + timedelta(minutes=minute - offset)
        assert Corpus([f"{utc:%Y-%m-%dT%H:%M}:00Z ERROR x"]).contains(stamp), (text, offset)
    assert Corpus([f"{_DAY + timedelta(minutes=minute):%Y-%m-%dT%H:%M}:00Z ERROR x"]).pins(stamp) is False
    if len(offsets) > 1:
        assert stamp.uncertain


@given(
    # each place's offset on _DAY (19 February: summer in Auckland, winter in Berlin)
    place=st.sampled_from([("Auckland", 13), ("São Paulo", -3), ("Tokyo", 9), ("Berlin", 1)]),
    minute=st.integers(0, 24 * 60 - 1),
    before=st.booleans(),
)
def test_a_place_right_beside_a_clock_names_its_zone(place: tuple[str, int], minute: int, before: bool) -> None:
    """ "i.e. 6:29 am in São Paulo", "(Berlin 15:24)": the zone was found but never read, for want
    of a word the cheap hint looks for. The wall clock as UTC is no pinned reading of it."""
    name, hours = place
    clock = f"{minute // 60:02d}:{minute % 60:02d}"
    text = f"({name} {clock})" if before else f"i.e. {clock} in {name}"
    (stamp,) = [e for e in extract_entities(text) if e.kind == "timestamp"]
    utc = _DAY + timedelta(minutes=minute - 60 * hours)
    assert Corpus([f"{utc:%Y-%m-%dT%H:%M}:00Z ERROR x"]).contains(stamp), text
    wall = Corpus([f"{_DAY + timedelta(minutes=minute):%Y-%m-%dT%H:%M}:00Z ERROR x"])
    assert not (wall.contains(stamp) and wall.pins(stamp)), text  # as UTC at most a reading it does not pin


@given(
    hours=st.integers(-11, 14).filter(bool),
    first=st.integers(0, 24 * 60 - 2),
    later=st.integers(1, 600),
    form=st.sampled_from(["{z} 的 {a} 还是 240，到 {b} 就变成了 0。", "At {a} {z} it read 240; by {b} it was 0."]),
)
def test_a_bare_clock_after_a_zoned_one_may_be_in_its_zone(hours: int, first: int, later: int, form: str) -> None:
    """ "UTC+05:30 的 05:27:42 还是 240，到 05:30:00 就变成了 0": the second clock was compared as UTC
    and blocked a true claim. Read in the zone the claim gave the first too — a reading it does
    not pin, so at most an inference."""
    second = (first + later) % (24 * 60)
    zone = f"UTC{'+' if hours > 0 else '-'}{abs(hours):02d}:00"
    text = form.format(z=zone, a=f"{first // 60:02d}:{first % 60:02d}", b=f"{second // 60:02d}:{second % 60:02d}")
    stamps = [e for e in extract_entities(text) if e.kind == "timestamp"]
    assert len(stamps) == 2, text
    utc = _DAY + timedelta(minutes=second - 60 * hours)
    output = Corpus([f"{utc:%Y-%m-%dT%H:%M}:00Z 0"])
    assert output.contains(stamps[1]) and not output.pins(stamps[1]), text


@given(
    hours=st.integers(-10, 12).filter(bool),  # beyond, two offsets give the same clocks: no shift read
    minute=st.integers(0, 24 * 60 - 1),
    day=st.integers(2, 27),
)
def test_a_date_written_apart_from_a_zoned_clock_is_the_readers_day(hours: int, minute: int, day: int) -> None:
    """ "at 9:11 pm PDT on 21 August" of a 04:11Z point of 22 August: the date is the reader's day;
    the UTC day is the next one when the clock crosses midnight there. Another day is neither."""
    zone = f"UTC{'+' if hours > 0 else '-'}{abs(hours):02d}:00"
    clock = f"{minute // 60:02d}:{minute % 60:02d}"
    text = f"It peaked at {clock} {zone} on {day} August."
    (date_fact,) = [e for e in extract_entities(text) if e.kind == "date"]
    instant = datetime(2022, 8, day, tzinfo=UTC) + timedelta(minutes=minute - 60 * hours)
    assert Corpus([f"{instant:%Y-%m-%dT%H:%M}:00Z 19.93 m"]).contains(date_fact), (text, instant)
    elsewhere = instant + timedelta(days=3)
    assert not Corpus([f"{elsewhere:%Y-%m-%dT%H:%M}:00Z 19.93 m"]).contains(date_fact), text


@given(
    st.sampled_from([(8, "新加坡时间"), (9, "东京时间"), (-8, "洛杉矶时间"), (8, "北京时间"), (-3, "圣保罗时间")]),
    st.integers(0, 24 * 60 - 1),
    st.integers(2, 27),
    st.sampled_from(["第一条警告出现在{z} {m} 月 {d} 日 {c}。", "{z} {m} 月 {d} 日 {c} 开始报错"]),
)
@example((8, "新加坡时间"), 18 * 60 + 5, 24, "第一条警告出现在{z} {m} 月 {d} 日 {c}。")
def test_a_date_before_a_clock_zoned_by_a_place_is_the_readers_day(
    zone: tuple[int, str], minute: int, day: int, form: str
) -> None:
    """ "第一条 throttled 警告出现在新加坡时间 11 月 24 日凌晨 2:05" of a line at 18:05Z on 24 November
    (02:05 on the 25th there): the date before a clock a place zones was dropped unread, so the
    UTC date kept across midnight passed. It is the reader's day: the UTC day of its clock."""
    hours, place = zone
    instant = datetime(2026, 11, day, tzinfo=UTC) + timedelta(minutes=minute)
    local = instant + timedelta(hours=hours)
    line = Corpus([f"{instant:%Y-%m-%dT%H:%M}:40Z WARN pg-backup throttled"])

    def dates(on: datetime) -> list[Entity]:
        text = form.format(z=place, m=on.month, d=on.day, c=f"{local:%H:%M}")
        return [e for e in extract_entities(text) if e.kind == "date"]

    (reader,) = dates(local)
    assert line.contains(reader), (local, instant)
    if local.date() != instant.date():
        (utc_day,) = dates(instant)  # the UTC date beside the local clock: another instant
        assert not line.contains(utc_day), (instant, local)


def _face(moment: datetime) -> str:
    """A clock as a reader writes it on a twelve-hour dial, without am/pm."""
    return f"{moment.hour % 12 or 12}:{moment:%M}"


@given(
    st.integers(12 * 60, 24 * 60 - 1),
    st.sampled_from(
        [(7, "曼谷时间", "ICT"), (-10, "夏威夷时间", "HST"), (1, "柏林时间", "CET"), (8, "北京时间", "CST")]
    ),
    st.sampled_from(["{c} 降到 9.44%", "到 {c} 回落", "it was back to normal by {c}"]),
    st.integers(3, 50),
)
@example(13 * 60 + 5, (7, "曼谷时间", "ICT"), "{c} 降到 9.44%", 3)
def test_a_bare_twelve_hour_face_may_be_either_half_of_the_readers_day(
    minute: int, zone: tuple[int, str, str], template: str, off: int
) -> None:
    """ "下午 1:02（ICT）" in one claim, "1:05 降到 9.44%" in the next: the reader writes 13:05 of
    their afternoon as 1:05. It was read only as 01:05 there and withheld; now it is an inference
    (no zone nor half pinned), and a face a few minutes off still fails."""
    hours, place, abbreviation = zone
    local = _DAY + timedelta(minutes=minute)  # an afternoon or evening clock of the reader
    instant = local - timedelta(hours=hours)
    output = f"{instant:%Y-%m-%dT%H:%M}:10Z cpu 9.44%"
    named = f"CPU 在{place}下午 {local.hour - 12 or 12}:{local:%M}（{abbreviation}）开始升高"
    (outcome, reason), label = _reader_zone_outcomes(named, template.format(c=_face(local)), output)
    assert outcome == "warn" and reason.startswith(ZONE_UNPINNED), (_face(local), reason)
    assert label == "reasonable_inference", label
    wrong = template.format(c=_face(local + timedelta(minutes=off)))
    assert _reader_zone_outcomes(named, wrong, output)[0][0] == "fail", wrong


@given(
    st.integers(1_000_000_000, 1_999_999_999),
    st.sampled_from([("Anchorage", "America/Anchorage"), ("Berlin", "Europe/Berlin"), ("柏林", "Europe/Berlin")]),
    st.sampled_from(["{place} 时间 {t:%H:%M:%S}", "{t:%H:%M:%S} {place} time"]),
)
@example(1131566501, ("Anchorage", "America/Anchorage"), "{place} 时间 {t:%H:%M:%S}")
def test_a_lines_epoch_tells_the_season_of_a_zoned_clock(epoch: int, place: tuple[str, str], form: str) -> None:
    """ "Anchorage 时间 12:01:41" of a Thunderbird line whose epoch is 20:01:41Z on 9 November: its
    day is in winter (AKST, UTC−9, so 11:01:41); the summer reading of a clock without a day, 12:01:41
    AKDT, is no reading of that line. The right one is stated."""
    name, key = place
    if not name.isascii():
        form = "{place}时间 {t:%H:%M:%S}"
    instant = datetime.fromtimestamp(epoch, UTC)
    zone = ZoneInfo(key)
    face = instant - timedelta(hours=8)
    line = f"- {epoch} {instant:%Y.%m.%d} aadmin2 {face:%b %d %H:%M:%S} src@aadmin2 dhcpd: no free leases"
    right = instant.astimezone(zone)
    assert _stated(form.format(place=name, t=right), line)[0], (line, right)
    offset = right.utcoffset()
    assert offset is not None
    other = (right - timedelta(hours=1)) if right.dst() else (right + timedelta(hours=1))  # the other season's face
    assume(f"{other:%H:%M}" != f"{face:%H:%M}")  # the line's own face is no UTC clock anyway
    assert not _stated(form.format(place=name, t=other), line)[0], (line, other)


_PART_HOUR = sorted(
    name for name, offsets in _ABBREVIATIONS.items() if len(offsets) == 1 and offsets[0] % 60 and name.isalpha()
)


@given(st.sampled_from([*_PART_HOUR, "IRDT", "NPT"]), st.integers(0, 24 * 60 - 1), st.integers(1, 29))
@example("NST", 23 * 60, 5)
@example("MMT", 15 * 60, 5)
def test_a_zone_of_part_of_an_hour_is_read_at_its_offset(name: str, minute: int, off: int) -> None:
    """ "2 月 7 日 NST 晚上 11 点" (Newfoundland, UTC−3:30), "04:30 IRDT" (+4:30), "NPT" (+5:45): an
    abbreviation of an offset of part of an hour is that offset (they were read as no zone, so a UTC
    stamp's face passed as the local time); minutes off are not its instant."""
    # when.yaml's words come first (MMT is Myanmar's +6:30 there, Monrovia's −0:45 in the tz database)
    offset = {"IRDT": 270, "NPT": 345, "MMT": 390}.get(name) or _ABBREVIATIONS[name][0]
    local = datetime(2026, 2, 7, tzinfo=UTC) + timedelta(minutes=minute)
    instant = local - timedelta(minutes=offset)
    output = f"{instant:%Y-%m-%dT%H:%M}:00Z 74.57"
    assert _stated(f"the last reading was at {local:%H:%M} {name}", output)[0], (name, output)
    assert not _stated(f"the last reading was at {local + timedelta(minutes=off):%H:%M} {name}", output)[0]
    assert not _stated(f"the last reading was at {instant:%H:%M} {name}", output)[0]  # the UTC face
