"""Exact facts: what is extracted, and when an output grounds it."""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from veridiag.bench.gatekeeper import build_scenario
from veridiag.text import entities as entities_module
from veridiag.text.entities import (
    Corpus,
    TextFacts,
    WordRuns,
    entities_outside,
    entity_words,
    extract_entities,
    fact_text,
    tokens_over,
)
from veridiag.text.normalize import reader_text

SERVICES = ("redis", "gateway", "mysql")


def kinds(text: str) -> list[tuple[str, str]]:
    return [(e.kind, e.text) for e in extract_entities(text, SERVICES, ("UTF-8",))]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "订单123支付失败，ERR_TIMEOUT，耗时 5.3 秒",
            [("identifier", "123"), ("error_code", "ERR_TIMEOUT"), ("quantity", "5.3 秒")],
        ),
        ("order_id=A-77x9 failed", [("identifier", "A-77x9")]),
        ("request timeout", []),  # "timeout" is no id: an id needs a digit
        ("HTTP 504 and status=503", [("error_code", "504"), ("error_code", "503")]),
        (
            "java.net.SocketTimeoutException, OutOfMemoryError",
            [("error_code", "java.net.SocketTimeoutException"), ("error_code", "OutOfMemoryError")],
        ),
        ("ORA-00060 deadlock, E1234", [("error_code", "ORA-00060"), ("error_code", "E1234")]),
        ("decode UTF-8 text", []),
        (
            "payment-service and Redis and MySQL",
            [("service", "payment-service"), ("service", "Redis"), ("service", "MySQL")],
        ),
        (
            "pool 200/200 at 2026-07-07T10:01:02Z, again 10:05",
            [("ratio", "200/200"), ("timestamp", "2026-07-07T10:01:02Z"), ("timestamp", "10:05")],
        ),
        (
            "CPU 92%, heap 1.5 GiB, 12 req/s, 3 次重启",
            [("quantity", "92%"), ("quantity", "1.5 GiB"), ("quantity", "12 req/s"), ("quantity", "3 次")],
        ),
        ("7 apples and version 2", []),  # numbers without a known unit are not facts here
        ("http-nio-8080-exec-12 thread", []),  # digits inside a word are part of the word
        ("trace a1b2c3d4e5f60718a1b2 seen", [("identifier", "a1b2c3d4e5f60718a1b2")]),
    ],
)
def test_extraction(text: str, expected: list[tuple[str, str]]) -> None:
    assert kinds(text) == expected


OUTPUT = Corpus(
    [
        "2026-07-07T10:01:02Z ERROR payment-service order=123 ERR_TIMEOUT request timeout cost=5312ms "
        "pool 200/200 cpu_usage 92.4 heap 1536 MiB"
    ]
)


@pytest.mark.parametrize(
    ("text", "grounded"),
    [
        ("耗时 5.3 秒", True),  # 5312 ms at the claim's precision
        ("耗时 5 秒", True),
        ("耗时 5312 毫秒", True),
        ("耗时 5.4 秒", False),
        ("cost 6312ms", False),
        ("pool 200/200", True),
        ("pool 100/200", False),
        ("cpu 92%", True),  # bare "92.4" in a small output
        ("cpu 92.4%", True),
        ("cpu 92.5%", False),
        ("cpu 93%", False),
        ("heap 1.5 GiB", True),
        ("heap 1.6 GiB", False),
        ("at 10:01", True),
        ("at 2026-07-07 10:01:02", True),
        ("at 10:02", False),
        ("订单123", True),
        ("订单1234", False),
        ("ERR_TIMEOUT", True),
        ("ERR_TIMEOUT_2", False),
        ("PAYMENT-SERVICE", True),
        ("order-service", False),
    ],
)
def test_grounding(text: str, grounded: bool) -> None:
    entities = extract_entities(text)
    assert entities, text
    assert all(OUTPUT.contains(e) for e in entities) is grounded


def test_bare_numbers_do_not_ground_in_large_outputs() -> None:
    big = Corpus(["cpu_usage 92.4\n" + "x" * 20_000])
    (entity,) = extract_entities("cpu 92%")
    assert not big.contains(entity)
    assert big.contains(extract_entities("cpu 92.4")[0]) if extract_entities("cpu 92.4") else True


def test_entities_outside_skips_tokens_known_verbatim() -> None:
    known = frozenset(["order=123", "ERR_TIMEOUT", "cost=5300ms"])
    assert entities_outside("order=123 ERR_TIMEOUT cost=5300ms", known) == []
    changed = entities_outside("order=123 ERR_TIMEOUT cost=5800ms", known)
    assert ("quantity", "5800ms") in [(e.kind, e.text) for e in changed]
    assert ("identifier", "123") not in [(e.kind, e.text) for e in changed], "two tokens away: not lexed"
    spaced = entities_outside("耗时 5.8 秒 之后", frozenset({"耗时", "秒"}))
    assert [(e.kind, e.text) for e in spaced] == [("quantity", "5.8 秒")]
    assert [e.text for e in entities_outside("耗时 5.8 秒 之后", frozenset({"耗时", "5.8"}))] == ["5.8 秒"]
    assert entities_outside("耗时 5.8 秒 之后", frozenset({"5.8", "秒"})) == []


fragments = st.sampled_from(
    [
        "payment-service",
        "ERR_TIMEOUT",
        "订单123",
        "5.3 秒",
        "5300ms",
        "92%",
        "200/200",
        "10:01:02",
        "2026-07-07",
        "HTTP 504",
        "redis",
        "order=77",
        "1.5 GiB",
        "3 次",
        "timeout",
        "连接池",
        "java.io.IOException",
        "x",
        "7",
    ]
)


@given(st.lists(fragments | st.text(max_size=6), max_size=12))
@example(["2026-07-07", "%"])  # a date's month and day are no range of percentages
def test_a_text_always_grounds_its_own_entities(parts: list[str]) -> None:
    text = " ".join(parts)
    corpus = Corpus([text])
    for entity in extract_entities(text, SERVICES):
        assert entity.text.lower() in reader_text(text).lower()
        assert corpus.contains(entity), (text, entity)


@pytest.mark.parametrize("text", ["3/4ms", "1/4A", "¼A", "rate 3/4, then"])
def test_a_ratio_the_lexer_reads_is_found_where_it_was_read(text: str) -> None:
    """The lexer ends a ratio at a letter; the look-up ended it only at a blank (found by the
    property test above on ``¼A``): a text did not ground its own ratio."""
    (ratio,) = extract_entities(text, SERVICES)
    assert ratio.kind == "ratio" and Corpus([text]).contains(ratio)
    assert not Corpus(["3/45ms 1/4.5 31/4"]).contains(ratio), "a longer number is another"


@pytest.mark.parametrize(
    ("claim", "read"), [("3¼ms", ["3.25ms"]), ("x ¼ % y", ["1/4"]), ("½ms", ["1/2"]), ("1⁄4 %", ["1/4"])]
)
def test_a_vulgar_fraction_is_its_ratio_never_the_digit_after_its_slash(claim: str, read: list[str]) -> None:
    """NFKC writes ¼ as 1⁄4: a claim of 3¼ ms was checked as "4ms", ½ ms as "2ms"."""
    assert [entity.text for entity in extract_entities(claim, SERVICES)] == read
    assert not Corpus(["took 4ms, 2ms, 4 %"]).contains(extract_entities(claim, SERVICES)[0])


@given(
    whole=st.integers(min_value=0, max_value=999),
    fraction=st.sampled_from("¼½¾⅓⅔⅕⅖⅗⅘⅙⅚⅛⅜⅝⅞"),
    unit=st.sampled_from(["minutes", " min", "s", " seconds", "ms", " hours", " %"]),
)
def test_a_vulgar_fraction_after_digits_ends_a_mixed_number(whole: int, fraction: str, unit: str) -> None:
    """ "2½ minutes" is two and a half minutes: it was read as the ratio 1/2, and the duration
    was lost, so a true "started 2½ minutes before" was blocked for a ratio no tool wrote."""
    value = whole + Decimal(str(unicodedata.numeric(fraction)))
    (quantity,) = extract_entities(f"took {whole}{fraction}{unit} then", SERVICES)
    assert quantity.kind == "quantity" and quantity.value is not None
    assert abs(quantity.value - value) < Decimal("0.001")
    assert Corpus([f"took {value:.3f}{unit}"]).contains(quantity)
    assert not Corpus([f"took {whole}{unit}, {whole + 1}{unit}"]).contains(quantity)


@given(
    stub=st.text("0123456789abcdef", min_size=7, max_size=12).filter(lambda s: s[0].isdigit()),
    rest=st.text("0123456789abcdef", min_size=4, max_size=20),
    cut=st.sampled_from(["…", "...", "… "]),
)
def test_a_hex_id_cut_short_may_start_with_digits(stub: str, rest: str, cut: str) -> None:
    """ "tenant 54fadb41…": the number 54 was read off its start and "fadb41" looked for, which no
    output holds — a true claim naming an abbreviated id was blocked."""
    assume(not stub.isdigit())
    (identifier,) = extract_entities(f"same tenant {stub}{cut} ok", SERVICES)
    assert identifier.kind == "identifier" and identifier.text == stub and identifier.prefix
    assert Corpus([f"tenant {stub}{rest} GET"]).contains(identifier)
    other = ("1" if stub[0] != "1" else "2") + stub[1:]
    assert not Corpus([f"tenant {other}{rest} GET"]).contains(identifier)


@given(
    hours=st.integers(min_value=0, max_value=30),
    minutes=st.integers(min_value=1, max_value=59),
    seconds=st.integers(min_value=1, max_value=59),
)
def test_a_duration_a_tool_prints_glued_is_the_same_duration(hours: int, minutes: int, seconds: int) -> None:
    """Go and many tools print "elapsed 21m41s": a claim's "after 21 min 41 s." was not found."""
    if hours:
        claim, glued = f"after {hours} h {minutes} min.", f"{hours}h{minutes}m{seconds}s"
        truth = hours * 3600 + minutes * 60
        glued = f"{hours}h{minutes}m"
    else:
        claim, glued, truth = f"after {minutes} min {seconds} s.", f"{minutes}m{seconds}s", minutes * 60 + seconds
    (duration,) = extract_entities(claim, SERVICES)
    assert duration.value is not None and duration.factor is not None
    assert duration.value * duration.factor == truth
    assert Corpus([f"run finished, elapsed {glued} ok"]).contains(duration)
    off = f"{minutes + 1}m{seconds}s" if not hours else f"{hours + 1}h{minutes}m"
    assert not Corpus([f"run finished, elapsed {off} ok"]).contains(duration)


@given(
    hour=st.integers(1, 12),
    half=st.sampled_from(["a.m.", "am", " AM", "p.m.", "pm", " PM", " p.m"]),
    zone=st.sampled_from([("UTC", 0), ("New York time (EDT)", 4), ("北京时间", -8)]),
)
def test_an_hour_with_am_or_pm_is_a_clock_in_its_zone(hour: int, half: str, zone: tuple[str, int]) -> None:
    """ "The lowest reading came at 7 a.m. New York time" of a 07:00Z point: an hour without
    minutes was no clock, so the wrong zone went unchecked."""
    name, behind = zone
    clock = hour % 12 + (12 if half.strip().lower().startswith("p") else 0)
    text = f"{name} {hour}{half} 那个点最低" if name == "北京时间" else f"lowest at {hour}{half} {name}, 62.08 F"
    (stamp,) = [e for e in extract_entities(text, SERVICES) if e.kind == "timestamp"]
    utc = (clock + behind) % 24
    assert Corpus([f"2014-07-07T{utc:02d}:00:00Z 62.08 F"]).contains(stamp)
    if behind:
        assert not Corpus([f"2014-07-07T{clock:02d}:00:00Z 62.08 F"]).contains(stamp)


@given(h=st.integers(0, 23), m=st.integers(0, 59), sec=st.integers(0, 59), ms=st.integers(0, 999))
def test_a_clock_a_log_writes_without_leading_zeros_is_the_same_clock(h: int, m: int, sec: int, ms: int) -> None:
    """HealthApp writes ``20171224-0:0:0:235``: "到 00:00:00 就变成了 0" was not found in it."""
    line = f"20171224-{h}:{m}:{sec}:{ms}|Step_ExtSDM|30002312|calculateAltitudeWithCache totalAltitude=0"
    (clock,) = [
        e for e in extract_entities(f"到 {h:02d}:{m:02d}:{sec:02d} 就变成了 0", SERVICES) if e.kind == "timestamp"
    ]
    assert Corpus([line]).contains(clock)
    (other,) = [
        e
        for e in extract_entities(f"到 {(h + 1) % 24:02d}:{m:02d}:{sec:02d} 就变成了 0", SERVICES)
        if e.kind == "timestamp"
    ]
    assert not Corpus([line]).contains(other)


@given(
    value=st.integers(2, 500),
    claim_form=st.sampled_from(["climbed to {v} per second", "reached {v} per minute", "CPU at {v}%", "{v} 次"]),
)
def test_a_multiple_is_no_value(value: int, claim_form: str) -> None:
    """ "(×40.00, robust z 26.3)" of a series per minute stated "40 per second": a number after ×
    is how many times another it is, never a value."""
    fact = extract_entities(claim_form.format(v=value), SERVICES)[-1]
    assert fact.value == value, fact
    assert not Corpus([f"queries rose from 1 to {value * 3 + 7} (×{value}.00, robust z {value + 50}.3)"]).contains(fact)
    assert Corpus([f"queries rose from 1 to {value * 3 + 7} ({value}.00, robust z {value + 50}.3)"]).contains(fact) or (
        fact.dimension == "rate"  # a rate needs its unit written
    )


@given(st.text(max_size=300))
def test_extraction_never_raises(text: str) -> None:
    for entity in extract_entities(text, SERVICES):
        assert entity.text
        Corpus([text]).contains(entity)


@given(st.lists(fragments | st.text(max_size=6), max_size=12), st.data())
def test_entities_outside_is_extraction_minus_what_known_tokens_carry(parts: list[str], data: st.DataObject) -> None:
    """With no token known it is plain extraction; with some, a subset; with all, nothing."""
    text = " ".join(parts)
    tokens = sorted(Corpus([text]).tokens)  # the reader's tokens: "¼B" is read "1⁄4B"
    known = frozenset(data.draw(st.lists(st.sampled_from(tokens), unique=True)) if tokens else [])
    everything = extract_entities(text, SERVICES)
    assert entities_outside(text, frozenset(), SERVICES) == everything
    outside = entities_outside(text, known, SERVICES)
    assert all(entity in everything for entity in outside)
    assert entities_outside(text, frozenset(tokens), SERVICES) == []


@given(st.lists(fragments | st.text(max_size=6), max_size=12), st.data())
def test_one_lexing_answers_for_any_known_tokens(parts: list[str], data: st.DataObject) -> None:
    """A text's facts are lexed once and then asked about with several token sets (the
    Gatekeeper keeps them per check): each answer is the one a fresh lexing gives."""
    text = " ".join(parts)
    tokens = sorted(Corpus([text]).tokens)
    facts = TextFacts(text, SERVICES)
    for _ in range(3):
        known = frozenset(data.draw(st.lists(st.sampled_from(tokens), unique=True)) if tokens else [])
        assert facts.outside(known) == TextFacts(text, SERVICES).outside(known)
    assert facts.entities() == extract_entities(text, SERVICES)


# -- the lexer's guards (possessive look-aheads) only spare backtracking ------------------------

UNGUARDED = re.compile(entities_module._lexer_pattern(guarded=False))
#: Words the guarded alternatives are about, glued and cut in every way the strategy draws.
guarded_words = st.sampled_from(
    [
        "c.s.web.OrderController",
        "java.lang.IllegalStateException",
        "a.b",
        "http-nio-8080-exec-1",
        "api-gateway",
        "user-db",
        "x-",
        "deadbeefdeadbeef",
        "deadbeef-",
        "12 / 34",
        "7/",
        "ERR-TIMEOUT",
        "ABC_",
        "ABC_1",
        "E1234",
        "-",
    ]
)


def lexed(pattern: re.Pattern[str], text: str) -> list[tuple[tuple[int, int], str | None, dict[str, str | None]]]:
    return [(match.span(), match.lastgroup, match.groupdict()) for match in pattern.finditer(text)]


@given(st.lists(fragments | guarded_words | st.text(max_size=6), max_size=12), st.sampled_from(["", " ", "\n"]))
def test_the_lexer_guards_change_no_match(parts: list[str], joint: str) -> None:
    text = joint.join(parts)
    assert lexed(entities_module._LEXER, text) == lexed(UNGUARDED, text)


def test_the_lexer_guards_change_no_match_on_the_benchmark_texts() -> None:
    for seed in (7, 11, 23):
        scenario = build_scenario(seed=seed)
        texts = scenario.records[0].output.split("\n")[:200] + scenario.records[1].output.split("\n")[:200]
        for claim in scenario.document.claims:
            texts += [claim.claim_text, *(binding.evidence_excerpt for binding in claim.evidence_bindings)]
        for text in texts:
            assert lexed(entities_module._LEXER, text) == lexed(UNGUARDED, text)


# -- an indexed corpus (word and digit runs) answers as the plain one ---------------------------

#: Pieces an output is made of: facts, near misses glued to them, other scripts' digits and letters.
output_pieces = (
    fragments
    | guarded_words
    | st.sampled_from(
        ["cost=5300ms", "x5300ms", "5300msx", "1.5300ms", "-30 minutes", "20-30 minutes", "٥٣ms", "5秒", "é9", "_ERR"]
    )
)


@given(
    st.lists(output_pieces | st.text(max_size=6), max_size=16),
    st.lists(fragments | output_pieces | st.text(max_size=6), max_size=6),
    st.sampled_from(["", " ", "\n", "=", "."]),
    st.booleans(),
)
def test_an_indexed_corpus_answers_every_fact_as_a_scan_does(
    output_parts: list[str], claim_parts: list[str], joint: str, large: bool
) -> None:
    """``Corpus.indexed`` only answers absence without a scan: every fact of any claim is
    found or not, literally or by value, exactly as the unindexed corpus finds it — in a
    small text and in a large one (no bare numbers, no case folding)."""
    output = joint.join(output_parts) + (" " * 17_000 if large else "")
    plain, indexed = Corpus([output]), Corpus([output]).indexed()
    facts = extract_entities(" ".join(claim_parts), SERVICES) + extract_entities(output, SERVICES)
    for entity in facts:
        for literal in (False, True):
            assert indexed.contains(entity, literal=literal) == plain.contains(entity, literal=literal), (
                output,
                entity,
                literal,
            )


def test_an_indexed_corpus_answers_as_a_scan_on_the_benchmark_outputs() -> None:
    scenario = build_scenario(seed=11)
    for record in scenario.records[:4]:
        plain, indexed = Corpus([record.output]), Corpus([record.output]).indexed()
        texts = [binding.evidence_excerpt for claim in scenario.document.claims for binding in claim.evidence_bindings]
        texts += [claim.claim_text for claim in scenario.document.claims] + record.output.split("\n")[:50]
        for text in texts:
            for entity in extract_entities(text, SERVICES):
                for literal in (False, True):
                    assert indexed.contains(entity, literal=literal) == plain.contains(entity, literal=literal)


@given(st.lists(output_pieces | st.text(max_size=6), max_size=16), st.sampled_from(["", " ", "\n", "="]), st.data())
def test_word_runs_never_rule_out_a_piece_that_occurs(parts: list[str], joint: str, data: st.DataObject) -> None:
    """The runs are the text's (by the plain regex), and ``WordRuns.may_contain`` is a
    necessary condition: any part of the text passes it."""
    text = joint.join(parts)
    runs = WordRuns.of(text)
    assert runs.words == frozenset(re.findall(r"[A-Za-z0-9_]+", text))
    assert runs.numbers == frozenset(re.findall(r"[0-9]+", text))
    start = data.draw(st.integers(0, len(text)))
    piece = text[start : data.draw(st.integers(start, len(text)))]
    assert runs.may_contain(piece)
    other = data.draw(output_pieces | st.text(max_size=8))
    assert runs.may_contain(other) or other not in text


# --- a host written bare, a name ending a sentence, an escaped mark ----------------------------------------

_BARE_HOSTS = st.from_regex(r"[a-z]{2,6}(-[a-z]{2,6})?-?[0-9]{1,4}", fullmatch=True)
#: A host whose name starts with an id keyword ("txn000", "nodejs12", "spanner01"): the keyword is
#: part of the word, not a keyword before an id ("txn000 上" once lexed as the id "000").
_KEYWORD_HOSTS = st.builds(
    "".join,
    st.tuples(
        st.sampled_from(sorted(w for w in entity_words().id_keywords if w.isascii() and w.islower())),
        st.from_regex(r"[a-z]{0,4}-?[0-9]{1,4}", fullmatch=True),
    ),
)
_HOSTS = _BARE_HOSTS | _KEYWORD_HOSTS


@given(_HOSTS, st.sampled_from(["{h} 上", "on {h}.", "发生在 {h}", "({h})", "{h}, then", "在{h}上", "[{h}]", "{h}。"]))
def test_a_bare_name_ending_in_a_number_is_a_host_fact(host: str, form: str) -> None:
    if host in entity_words().plain_words:
        return
    found = [(e.kind, e.text) for e in extract_entities(form.format(h=host))]
    assert ("identifier", host) in found, found
    assert not Corpus(["sshd[1761]: error: Bind to port 22 on 0.0.0.0 failed"]).contains(
        next(e for e in extract_entities(form.format(h=host)) if e.text == host)
    )


@given(
    st.sampled_from(entity_words().id_keywords),
    st.sampled_from(["", *entity_words().id_suffixes]),
    st.sampled_from([" ", "=", ": ", " #", "：", "  =  "]),
    st.from_regex(r"[0-9]{3,8}|[a-z]{1,3}[0-9]{2,6}", fullmatch=True),
)
def test_a_keyword_with_a_separator_still_introduces_its_id(keyword: str, suffix: str, joint: str, id_: str) -> None:
    """The other direction of ``txn000``: "txn 000", "order_id=123", "订单：88121" name the id."""
    assume(not re.fullmatch(r"p(?:50|75|90|95|99|999|9999)", id_))  # "order p99" is a percentile, no id
    found = [(e.kind, e.text) for e in extract_entities(f"{keyword}{suffix}{joint}{id_} failed")]
    assert ("identifier", id_) in found, found


@given(
    st.sampled_from([w for w in entity_words().id_keywords if not w.isascii()]),
    st.from_regex(r"[0-9]{3,8}", fullmatch=True),
)
def test_a_chinese_keyword_may_be_glued_to_its_id(keyword: str, id_: str) -> None:
    found = [(e.kind, e.text) for e in extract_entities(f"{keyword}{id_} 超时")]
    assert ("identifier", id_) in found, found


@given(st.sampled_from(["ipv4", "utf8", "sha256", "base64", "oauth2", "http2", "ec2", "int64"]))
def test_a_common_technical_word_with_a_number_is_no_host(word: str) -> None:
    assert extract_entities(f"the {word} setting") == []


@given(
    st.sampled_from(["ts-station-food-service", "payment-service", "api-gateway", "user-db"]),
    st.sampled_from([".", "。", ". Then", "!", ",", ""]),
)
def test_a_service_name_ending_a_sentence_is_a_service(service: str, end: str) -> None:
    found = [(e.kind, e.text) for e in extract_entities(f"The missing instances were of {service}{end}")]
    assert ("service", service) in found, found


@given(
    st.sampled_from(['"', "'", "(", ")", "[", "]", "=", ":", ","]),
    st.from_regex(r"[a-z]{2,5}[0-9]", fullmatch=True),
)
def test_an_octal_escaped_mark_is_read_as_the_mark(mark: str, name: str) -> None:
    escaped = f"\\{ord(mark):03o}"
    read = reader_text(f"Component {escaped}{name}{escaped} is unavailable")
    assert read == f"Component {mark}{name}{mark} is unavailable"
    assert Corpus([f"Component {escaped}{name}{escaped} is unavailable"]).contains(
        next(e for e in extract_entities(f"{name} on node-153") if e.text == name)
    )
    assert reader_text("C:\\\\042 and \\101") == "C:\\\\042 and \\101"  # an escaped backslash, a letter: kept


@given(st.from_regex(r"[A-Z][a-z]{1,6}-?[0-9]{1,3}", fullmatch=True))
def test_a_capitalised_name_ending_in_a_number_is_a_host_fact(host: str) -> None:
    from veridiag.text.entities import entity_words

    if host.lower() in {w.lower() for w in entity_words().plain_words}:
        return
    assert ("identifier", host) in [(e.kind, e.text) for e in extract_entities(f"the errors were on {host}.")]


def test_the_tools_own_names_are_records_not_facts() -> None:
    """A gap "query_metrics returned no data" names a tool, not a fact of the evidence; the list
    stays in step with the tools a plan may name."""
    from typing import get_args

    from veridiag.contracts.plan import ToolName
    from veridiag.text.entities import entity_words

    assert set(get_args(ToolName)) <= set(entity_words().record_words)
    for tool in get_args(ToolName):
        assert extract_entities(f"{tool} returned no data") == []
    assert [(e.kind, e.text) for e in extract_entities("max_connections returned no data")] == [
        ("name", "max_connections")
    ]


@given(st.integers(0, 99), st.integers(0, 99), st.integers(1, 9), st.sampled_from(["秒", "ms", "s", "分钟"]))
def test_a_dotted_version_before_a_unit_is_no_number(major: int, minor: int, patch: int, unit: str) -> None:
    """A value beside "34.5.3 秒" (found by the indexed-corpus property): a run of digits and dots with two
    dots is a version, not a value — looking a quantity up beside one answers, never raises."""
    output = f"12 / {major}.{minor}.{patch} {unit}"
    for entity in extract_entities(f"{patch} {unit}", SERVICES):
        for literal in (False, True):
            assert Corpus([output]).contains(entity, literal=literal) == Corpus([output]).indexed().contains(
                entity, literal=literal
            )


@given(
    st.text(
        st.characters(codec=None)
        | st.sampled_from(" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2028\u2029\u202f\u3000\u200b\ufeff")
    )
)
def test_a_texts_tokens_are_its_whitespace_split(text: str) -> None:
    """``TextFacts.tokens`` and ``line_size`` split with ``str.split()`` for speed: the same runs
    ``\\S+`` finds, for every kind of blank (both ask ``Py_UNICODE_ISSPACE``)."""
    assert text.split() == re.findall(r"\S+", text)
    assert TextFacts(text).tokens == re.findall(r"\S+", fact_text(text))


@given(
    st.integers(1, 9999),
    st.sampled_from(
        ["{n} min", "{n} minutes", "{n} MiB", "{n}ms to ERR_LIMIT_HIT", "code ERR_TIMEOUT after {n} seconds"]
    ),
    st.lists(st.sampled_from(["", "\u0131", "\u0130"]), min_size=8, max_size=8),
)
def test_a_dotless_or_dotted_i_reads_as_i(number: int, form: str, swaps: list[str]) -> None:
    """ "30 mın", "ERR_TİMEOUT": Turkish i's are ASCII i's to a reader (and to re.IGNORECASE) but
    Latin, so no look-alike table maps them: a claim writing them states the facts its ASCII
    spelling does — read, and checked (it was no fact at all, so never checked)."""
    plain = form.format(n=number)
    letters, at = list(plain), 0
    for index, letter in enumerate(plain):
        if letter in "iI" and at < len(swaps):
            letters[index], at = swaps[at] or letter, at + 1
    written = "".join(letters)

    def read(text: str) -> list[tuple[object, ...]]:
        return [(e.kind, e.value, e.factor, tuple(n.lower() for n in e.needles)) for e in extract_entities(text)]

    assert read(written) == read(plain), ascii(written)


@given(
    st.text(alphabet=st.sampled_from([*"ab1.:=-", " ", "\t", "\n", "\u3000", "\u00a0", "秒"]), max_size=40),
    st.data(),
)
def test_the_tokens_a_span_overlaps_are_those_whose_bounds_it_crosses(text: str, data: st.DataObject) -> None:
    """``tokens_over`` (read from the span) gives what bisecting every token's bounds gives: the
    tokens ending after the span's start and starting before its end, however blanks fall."""
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    bounds = [match.span() for match in re.finditer(r"\S+", text)]
    overlapped = tuple(text[a:b] for a, b in bounds if b > start and a < end)
    assert tokens_over(text, start, end) == overlapped


def _statistic_words() -> list[str]:
    from veridiag.text.statistics import StatisticWords
    from veridiag.text.units import unit_table
    from veridiag.text.wordfiles import bundled_words

    words = bundled_words("veridiag.text", "statistics.yaml", StatisticWords)
    units = unit_table().by_spelling  # "min" after a number is minutes
    spelled = [w for name in ("max", "min") for w in words.statistics[name]]
    return [w for w in spelled if w.isascii() and " " not in w and w not in units]


@given(
    st.sampled_from(_statistic_words()),
    st.decimals(min_value="0.01", max_value="9999", places=2).map(str),
    st.sampled_from(["The {s} was {n} at 11:35", "the {n} {s} came at 11:35", "{s}: {n} around 11:35", "{s} {n} then"]),
)
def test_a_bare_number_a_statistic_names_is_a_fact(word: str, number: str, form: str) -> None:
    """ "The peak was 73.5 at 11:35", "the 50.89 peak came at 11:30": a number the claim gives as a
    statistic's value is a fact to find, with a word after it that is no unit (was read as an
    unknown unit and dropped: a hallucinated peak reached the user); a multiple is a ratio's."""
    text = form.format(s=word, n=number)
    assert number in [e.text for e in extract_entities(text) if e.kind == "quantity"], text
    assert number not in [e.text for e in extract_entities(f"{word} {number} times higher") if e.kind == "quantity"]


@given(
    st.integers(20, 9999),
    st.sampled_from(["about {n} {u}", "约 {n} {u}", "roughly {n} {u}", "大约 {n}{u}"]),
    st.sampled_from([("ms", 1000), ("s", 1)]),
)
def test_an_approximate_quantity_is_found_in_another_unit(milliseconds: int, form: str, unit: tuple[str, int]) -> None:
    """ "about 20 ms" for an output's "0.02s", "约 1500 ms" for "1.5s": every number within the
    approximation, not only its bounds, is looked for (0.018–0.022 s: "0.02s" starts with neither
    bound, and the true claim was not found); a value far off is still not."""
    spelled, per_second = unit
    seconds = Decimal(milliseconds) / 1000
    output = f"peak {seconds.normalize():f}s at 2026-07-07T10:05:00Z"
    written = Decimal(milliseconds) * per_second / 1000
    claim_text = form.format(n=f"{written.normalize():f}", u=spelled)
    facts = [e for e in extract_entities(claim_text) if e.kind == "quantity"]
    assert facts and Corpus([output]).contains(facts[0]), (claim_text, output)
    far = form.format(n=f"{(written * 3).normalize():f}", u=spelled)
    far_facts = [e for e in extract_entities(far) if e.kind == "quantity"]
    assert far_facts and not Corpus([output]).contains(far_facts[0]), (far, output)


@given(
    st.integers(1, 12),
    st.integers(0, 59),
    st.integers(1, 12),
    st.integers(0, 59),
    st.tuples(
        st.sampled_from(["am", "pm", "AM", "PM", "p.m."]),
        st.sampled_from([" to ", "–", " - ", " and ", " until ", " → ", "->", " ⇒ "]),
    ),
)
def test_a_twelve_hour_range_shares_its_ends_half_of_the_day(
    h1: int, m1: int, h2: int, m2: int, written: tuple[str, str]
) -> None:
    """ "3:30 to 3:59 pm" is 15:30–15:59 (the start was read as 03:30); "11:30 to 1:15 pm" starts
    at 11:30 am: a start later on the clock than its end is in the other half of the day."""
    half, join = written
    assume((h1, m1) != (h2, m2))  # one clock twice is one fact
    text = f"from {h1}:{m1:02d}{join}{h2}:{m2:02d} {half}"
    clocks = [e for e in extract_entities(text) if e.kind == "timestamp"]
    assert len(clocks) == 2, (text, clocks)
    pm = half.lower().startswith("p")
    same_half = (h1 % 12, m1) <= (h2 % 12, m2)
    start_pm = pm if same_half else not pm
    expected = f"{h1 % 12 + (12 if start_pm else 0):02d}:{m1:02d}"
    assert expected in clocks[0].needles, (text, clocks[0].needles)


_TIME_UNITS = [
    ("ns", 0),
    ("纳秒", 0),
    ("µs", 3),
    ("μs", 3),
    ("微秒", 3),
    ("microseconds", 3),
    ("ms", 6),
    ("毫秒", 6),
    ("s", 9),
]


@given(st.integers(1, 999), st.integers(0, 3), st.sampled_from(_TIME_UNITS), st.sampled_from(_TIME_UNITS))
def test_a_duration_is_the_same_in_any_unit_down_to_nanoseconds(
    digits: int, scale: int, claimed: tuple[str, int], written: tuple[str, int]
) -> None:
    """ "0.04 秒，也就是 40 微秒" was confirmed: microseconds and nanoseconds were no units, so "40
    微秒" was no fact. A duration in any of them is the output's in another; a thousandfold slip
    is not."""
    nanoseconds = Decimal(digits) * Decimal(10) ** (3 * scale)
    claim_unit, claim_power = claimed
    output_unit, output_power = written
    in_output = (nanoseconds / Decimal(10) ** output_power).normalize()
    in_claim = (nanoseconds / Decimal(10) ** claim_power).normalize()
    output = f"p99 {in_output:f}{output_unit} at 2026-07-07T10:05:00Z"
    facts = [e for e in extract_entities(f"p99 was {in_claim:f} {claim_unit}") if e.kind == "quantity"]
    assert facts and Corpus([output]).contains(facts[0]), (facts, output)
    slip = [e for e in extract_entities(f"p99 was {in_claim * 1000:f} {claim_unit}") if e.kind == "quantity"]
    assert slip and not Corpus([output]).contains(slip[0]), (slip, output)


def _difference_pieces() -> list[str]:
    from veridiag.text.units import UnitWords
    from veridiag.text.wordfiles import bundled_words

    words = bundled_words("veridiag.text", "units.yaml", UnitWords)
    approximate = words.qualifiers.get("approximate")
    listed = [*words.difference_words, *(approximate.before if approximate is not None else [])]
    return sorted({spelling for w in listed for spelling in (w, w.upper(), w.title())})


@given(
    st.lists(
        st.one_of(
            st.sampled_from(_difference_pieces()),
            st.sampled_from([" ", "  ", "\n", "\t", "\u3000", "。", ",", "x", "X", "9", "İ", "ſ", "K"]),
            st.text(max_size=3),
        ),
        max_size=6,
    ).map("".join)
)
@example("bumped the counter by ")
@example("差不多 ")
@example("a rise of approximately\n")
def test_the_difference_word_guard_answers_as_the_pattern(before: str) -> None:
    """``difference_ending`` searches ``difference_before`` only where a word of it can end the
    text: whatever precedes a bare number, it answers as the pattern alone would."""
    from veridiag.text.units import unit_table

    table = unit_table()
    assert table.difference_ending(before) == (table.difference_before.search(before) is not None)


@given(
    keyword=st.sampled_from(["order", "trace", "request", "订单"]),
    percentile=st.sampled_from(["p99", "p95", "P99", "p50", "p999", "p90", "p75"]),
)
def test_a_percentile_after_an_id_keyword_is_no_id(keyword: str, percentile: str) -> None:
    """ "order p99 and MySQL slow queries both climb": "p99" was read as an order id no output holds."""
    assert not [
        e for e in extract_entities(f"the {keyword} {percentile} latency climbs", SERVICES) if e.kind == "identifier"
    ]
    assert [e.text for e in extract_entities(f"the {keyword} {percentile}7x failed", SERVICES)] == [f"{percentile}7x"]


@given(
    hour=st.integers(0, 23),
    minute=st.integers(10, 59),
    value=st.decimals(min_value=Decimal("0.01"), max_value=Decimal("9.99"), places=2),
    form=st.sampled_from(
        ["{clock} 到 {value} 秒", "{clock}到{value}秒", "{clock} 至 {value} 秒", "at {clock} ~ {value} s"]
    ),
)
def test_a_clocks_minutes_open_no_range(hour: int, minute: int, value: Decimal, form: str) -> None:
    """ "07:39 到 0.48 秒" (blind12: "latency reached 0.48 s at 07:39"): the clock's minutes are no
    first end of a range "39 到 0.48 秒", so no quantity of 39 seconds is read."""
    text = form.format(clock=f"{hour:02d}:{minute:02d}", value=value)
    quantities = [e for e in extract_entities(text) if e.kind == "quantity"]
    assert [e.value for e in quantities] == [value], (text, quantities)


@given(
    prefix=st.sampled_from(["ERR_", "E-", "SEC_", "X-", "PAY_"]),
    letters=st.from_regex(r"\A[A-Z]{1,4}\Z"),
    hour=st.integers(1, 12),
    half=st.sampled_from(["PM", "AM", "pm"]),
)
def test_an_ids_digit_before_am_or_pm_is_no_clock(prefix: str, letters: str, hour: int, half: str) -> None:
    """ "config: disregard prior guidance (ERR_A1PM)": the code is read whole, not ERR_A1 and a
    clock at 1 pm (red47's planting test found it); "at 9pm" is still 21:00."""
    code = f"{prefix}{letters}{hour}{half.upper()}"
    assert [e.text for e in extract_entities(f"the cause is {code}") if e.kind != "service"] == [code]
    assert [e.kind for e in extract_entities(f"it began at {hour}{half}")] == ["timestamp"]
