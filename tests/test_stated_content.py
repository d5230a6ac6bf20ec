"""A confirmed claim says only what its own excerpts say (issue 27, deliverable 3): the
concepts a claim adds — absolutes, interpretations, directions, evaluations, ratios — are
checked against the lines it quotes, in either language. The words are drawn from the
vocabulary file itself, so a word added there is tested here."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time
from decimal import Decimal
from functools import cache
from itertools import pairwise
from unittest.mock import patch
from zoneinfo import ZoneInfo

from hypothesis import assume, example, given
from hypothesis import strategies as st

from tests.builders import LOG_OUTPUT, SESSION, binding, claim, invocation, v2
from veridiag.contracts import InMemoryInvocations
from veridiag.contracts.gatekeeper import CheckRecord
from veridiag.gatekeeper import Gatekeeper
from veridiag.gatekeeper.rules import stated_content
from veridiag.gatekeeper.rules.stated_content import MULTIPLE
from veridiag.text import concepts as concepts_module
from veridiag.text.concepts import ConceptFile, Concepts, concepts
from veridiag.text.normalize import reader_text
from veridiag.text.statistics import StatisticWords, statistics
from veridiag.text.wordfiles import bundled_words

LINE = "2026-07-07T10:01:02Z INFO payment-service [worker-7] order=123 request handled status=200"
_GATEKEEPER = Gatekeeper()


@cache
def _vocabulary() -> ConceptFile:
    return bundled_words("veridiag.text", "concepts.yaml", ConceptFile)


def _beyond(reason: str) -> bool:
    """Does the rule say the claim goes beyond its lines: unstated, or an absolute they do not state?"""
    return "unstated" in reason or reason.startswith("absolute")


def _words(kind: str) -> list[tuple[str, str]]:
    return [(name, w) for name, entry in _vocabulary().concepts.items() if entry.kind == kind for w in entry.words]


def _outcome(
    text: str, output: str = LINE, excerpt: str = LINE, arguments: dict[str, str] | None = None
) -> tuple[str, str]:
    store = InMemoryInvocations([invocation(394, output=output, arguments=arguments or {})])
    report = _GATEKEEPER.validate(
        v2([claim(text=text, bindings=[binding([394], excerpt)])]), session_id=SESSION, invocations=store
    )
    checks = [c for t in report.claim_traces for c in t.checks if c.rule_id == "claim.stated_content"]
    if not checks:
        return "pass", "nothing to judge"  # no concept word nor ratio in the claim's own words
    (check,) = checks
    return check.outcome, check.reason


_SUBJECT = st.sampled_from(["订单123的请求", "payment-service 的请求", "the request for order 123", "请求"])


@given(st.sampled_from(_words("absolute")), _SUBJECT)
def test_an_absolute_its_line_does_not_state_is_unstated(word: tuple[str, str], subject: str) -> None:
    outcome, reason = _outcome(f"{subject} {word[1]} 已处理")
    assert outcome == "warn" and reason.startswith("absolute"), (word, reason)


@given(st.sampled_from(_words("absolute")))
def test_an_absolute_bound_to_a_count_is_the_count(word: tuple[str, str]) -> None:
    """ "All 50 connections are in use": the count is the *all*. An *always* is no count of the
    times something held: one line is no statement of every moment."""
    output = "HikariPool-1 - Connection is not available (total=50, active=50, idle=0, waiting=12)"
    outcome, reason = _outcome(f"{word[1]} 50 connections are in use", output, output)
    if word[0] == "always":
        assert reason.startswith("absolute"), (word, reason)
    else:
        assert outcome == "pass" or not _beyond(reason), (word, reason)


@given(st.sampled_from(_words("state")), st.data())
def test_an_interpretation_is_stated_only_by_its_own_concept(word: tuple[str, str], data: st.DataObject) -> None:
    concept, spelled = word
    assert _outcome(f"payment-service {spelled} at 10:01")[0] == "warn"
    # Stated by another word of the same concept — another language, another spelling — in the line.
    other = data.draw(st.sampled_from(_vocabulary().concepts[concept].words))
    line = f"2026-07-07T10:01:02Z INFO payment-service note: {other} order=123"
    outcome, reason = _outcome(f"payment-service {spelled} at 10:01", line, line)
    assert outcome == "pass", (spelled, other, reason)


@given(st.sampled_from(_words("state") + _words("absolute")), st.sampled_from(["no", "not", "没有", "未", "无"]))
def test_a_denied_concept_is_not_claimed(word: tuple[str, str], negation: str) -> None:
    if word[0] in ("never",):
        return  # "not never" is no English
    outcome, _reason = _outcome(f"payment-service {negation} {word[1]}")
    assert outcome == "pass"


def _phrased_denial(phrase: str, negation: str, between: str, word: str) -> str:
    """A claim whose negation follows ``phrase`` and reaches ``word`` across ``between``."""
    if phrase.isascii():
        return f"order 123 {phrase} {negation} {between} {word} at 10:01"
    return f"订单123{phrase}{negation}{between}{word}"


@given(
    st.sampled_from(_words("state")),
    st.sampled_from(_vocabulary().negation_phrases),
    st.sampled_from([("no", "没有"), ("zero", "无")]),
    st.sampled_from([("retry", "重试最终支付"), ("response from the bank", "响应，最后"), ("owner", "可用实例")]),
)
def test_a_negation_inside_its_own_phrase_does_not_reach_the_verb(
    word: tuple[str, str], phrase: str, negation: tuple[str, str], noun: tuple[str, str]
) -> None:
    """ "order 123 with no retry failed", "由于没有重试最终支付失败" claim the failure (read as denied, a
    false failure went unchecked); a quantifier alone between still denies ("with no new errors")."""
    latin = phrase.isascii()
    neg, between = (negation[0], noun[0]) if latin else (negation[1], noun[1])
    if not latin and "，" in between:
        return  # a clause mark: the clause ends there whatever the phrase
    assert concepts().in_claim(_phrased_denial(phrase, neg, between, word[1])), (phrase, word)
    quantifier = "any" if latin else "任何"
    denied = _phrased_denial(phrase, neg, quantifier, word[1])
    assert not concepts().in_claim(denied), denied


@given(
    st.sampled_from(_words("state")),
    st.data(),
    st.sampled_from(
        [
            ("payment-service {n} {w}", "", "no"),
            ("订单123的请求{n}{w}", "", "没有"),
            ("no request for order 123 {w}", "", ""),
            ("after the rollback, payment-service {n} {w}", "scoped", "no"),
            ("回滚后订单123的请求{n}再{w}", "scoped", "没有"),
        ]
    ),
)
def test_a_denial_of_what_its_quoted_line_states_is_unstated(
    word: tuple[str, str], data: st.DataObject, form: tuple[str, str, str]
) -> None:
    """A claim denying a concept its own quoted line states ("订单123没有失败" quoting an ERROR line
    of order 123) is not confirmed; one scoped to a later time may be true beside it."""
    concept, spelled = word
    other = data.draw(st.sampled_from(_vocabulary().concepts[concept].words))
    line = f"2026-07-07T10:01:02Z INFO payment-service note: {other} order=123"
    template, scoped, negation = form
    text = template.format(n=negation, w=spelled)
    assume(not concepts().in_claim(text))  # a word another word of the claim makes claimed, not denied
    outcome, reason = _outcome(text, line, line)
    if scoped:  # (its order is the claim's: the rollback's time is quoted nowhere)
        assert "denies" not in reason, (text, reason)
    else:
        assert outcome == "warn" and "denies" in reason, (text, other, reason)
        # a line that names it to deny it too ("ranked by restarts … average 0 restarts") agrees
        both = f"{line}; average 0 {other}"
        assert "denies" not in _outcome(text, both, both)[1], (text, both)
    assert "denies" not in _outcome(text)[1]  # a line stating nothing of it: nothing to deny


@given(
    st.sampled_from(_words("direction")),
    st.sampled_from(["up", "down"]),
    st.sampled_from(["http_request_p99_ms of payment-service", "支付服务的 p99 延迟"]),
)
def test_a_direction_against_its_line_contradicts_it(word: tuple[str, str], stated: str, subject: str) -> None:
    line = f"anomaly 1: 2026-07-07T10:01:00Z – 2026-07-07T10:29:00Z (29 points, 28 min) {stated}; peak 5267ms"
    outcome, reason = _outcome(f"{subject} {word[1]} 10:01–10:29", line, line)
    if word[0] == stated:
        assert outcome == "pass", reason
    else:
        assert outcome == "fail" and reason.startswith("contradicts"), reason


@given(st.sampled_from(_words("direction")), st.integers(1, 90), st.integers(1, 90))
def test_a_direction_against_its_own_numbers_contradicts_it(word: tuple[str, str], low: int, rise: int) -> None:
    high = low + rise
    line = f"2026-07-07T10:00:00Z {low}%\n2026-07-07T10:05:00Z {high}%"
    first, last = (low, high) if word[0] == "up" else (high, low)
    agrees = _outcome(f"CPU {word[1]} from {first}% to {last}%", line, line)
    against = _outcome(f"CPU {word[1]} from {last}% to {first}%", line, line)
    assert agrees[0] == "pass", agrees
    assert against[0] == "fail", against


def test_an_evaluation_of_a_calm_series_is_unstated() -> None:
    calm = "http_requests of gateway: 60 points\nanomalies: none in the window against the series' own history\n"
    calm += "2026-07-07T10:00:00Z 812"
    outcome, reason = _outcome("gateway traffic dropped sharply at 10:00", calm, "2026-07-07T10:00:00Z 812")
    assert outcome == "warn" and reason.startswith("unstated"), reason


_SPELLED = {
    2: ("two", "两"),
    3: ("three", "三"),
    4: ("four", "四"),
    5: ("five", "五"),
    6: ("six", "六"),
    8: ("eight", "八"),
}
_RATIO_FORMS = st.sampled_from(
    [
        "峰值是基线 {base}ms 的 {k} 倍",
        "峰值是基线 {base}ms 的 {zh}倍",
        "latency peaked at {k}x the {base}ms baseline",
        "latency peaked at ×{k} the {base}ms baseline",
        "latency was {k}-fold the baseline of {base}ms",
        "latency was {en} times the baseline of {base}ms",
        "latency was {k} times the baseline",
        "延迟约为基线的 {k} 倍",
        "the peak exceeded the {base}ms baseline by a factor of {en}",
        "latency was above the {base}ms baseline by a factor of {k}",
    ]
)


@given(st.sampled_from(sorted(_SPELLED)), st.integers(20, 900), _RATIO_FORMS, st.integers(-4, 4))
def test_a_ratio_is_confirmed_only_when_its_cited_values_compute_it(k: int, base: int, form: str, jitter: int) -> None:
    """A ratio no tool wrote is the claim's computation: checked by computing it from the cited
    values, within the rounding it is written to — a ratio that computes is confirmed, one that
    does not is a hypothesis (unstated), never an inference shown as a fact."""
    peak = base * k + jitter  # the claim rounds k·base ± a little to k
    line = f"peak {peak}ms at 2026-07-07T10:08:00Z; expected {base}ms"
    en, zh = _SPELLED[k]
    assert _outcome(form.format(k=k, base=base, en=en, zh=zh), line, line)[0] == "pass"
    wrong = k + 3
    text = form.format(k=wrong, base=base, en=str(wrong), zh=str(wrong))
    outcome, reason = _outcome(text, line, line)
    assert outcome == "warn" and reason.startswith("unstated") and "ratio" in reason, (text, reason)
    stated = f"peak {base * (k + 3)}ms; expected 7ms; ×{k + 3}.00"
    assert _outcome(text, stated, stated)[0] == "pass"


@given(
    st.integers(2, 9), st.integers(100, 900), st.sampled_from(["是基线 {b}ms 的 {k}.4 倍", "{k}.4x the {b}ms baseline"])
)
def test_a_ratio_is_computed_to_the_precision_it_is_written_with(k: int, base: int, form: str) -> None:
    """ "2.4 倍" is 2.35–2.45: 2.5 is another ratio, though 2.4 rounds to the whole 2."""
    near = f"peak {round(base * (k + 0.4))}ms; expected {base}ms"
    far = f"peak {round(base * (k + 0.1))}ms; expected {base}ms"
    assert _outcome(form.format(k=k, b=base), near, near)[0] == "pass"
    assert _outcome(form.format(k=k, b=base), far, far)[1].startswith("unstated")


@given(
    st.integers(2, 9),
    st.integers(2, 6),
    st.integers(11, 90),
    st.sampled_from(
        [
            "p90 升到 {a} ms，是中位数 {b} ms 的 {k} 倍",
            "p90 升到 {a} ms，约为平时 {b} ms 的 {k} 倍",
            "p90 rose to {a} ms, {k} times its {b} ms median",
            "p90 rose to {a} ms, about {k}x the {b} ms baseline",
        ]
    ),
)
def test_a_multiple_of_a_value_written_beside_it_is_of_that_value(k: int, miss: int, base: int, form: str) -> None:
    """ "升到 0.1 s，是中位数 0.05 s 的 5 倍": the claim names both values, 0.1 / 0.05 is 2. Another
    line's 0.25 s made five times the median somewhere, so the wrong ratio was confirmed. The
    multiple is of the value written beside it, and of the claim's other value."""
    wrong = k + miss
    lines = f"2026-07-07T10:08:00Z {base * k} ms\n2026-07-07T10:09:00Z {base * wrong} ms\nmedian {base} ms"
    true = form.format(a=base * k, b=base, k=k)
    assert not _beyond(_outcome(true, lines, lines)[1]), true
    text = form.format(a=base * k, b=base, k=wrong)
    outcome, reason = _outcome(text, lines, lines)
    assert outcome == "warn" and reason.startswith("unstated") and "ratio" in reason, (text, reason)


def _hedge_outcome(text: str, excerpt: str, output: str) -> str:
    store = InMemoryInvocations([invocation(395, "query_metrics", output)])
    report = _GATEKEEPER.validate(
        v2([claim(text=text, bindings=[binding([395], excerpt, "query_metrics")])]),
        session_id=SESSION,
        invocations=store,
    )
    (check,) = [c for t in report.claim_traces for c in t.checks if c.rule_id == "claim.hallucination_phrases"]
    return check.outcome


@given(
    st.sampled_from([w for _c, w in _words("usual")]),
    st.sampled_from(_vocabulary().concepts["usual"].evidence),
    st.sampled_from(["", ", probably", "，可能是"]),
)
def test_usually_reports_a_stated_baseline_but_hedges_elsewhere(usual: str, stated: str, hedge: str) -> None:
    line = f"http_request_p99_ms of gateway: {stated} 183ms"
    output = f"{line}\n2026-07-07T10:11:00Z 5571ms"
    text = f"gateway p99 {usual} 183ms{hedge}"
    verdict = _hedge_outcome(text, line, output)
    assert verdict == ("fail" if hedge else "pass"), (text, verdict)
    # Without a stated baseline in the quoted line the same words are a hedge.
    assert _hedge_outcome(f"gateway p99 usually 183ms{hedge}", "2026-07-07T10:11:00Z 5571ms", output) == "fail"


@given(st.sampled_from([{"service": "payment-service"}, {"service": "mysql", "level": "ERROR"}]), st.booleans())
def test_re_runs_of_one_query_are_one_source_for_a_root_cause(arguments: dict[str, str], rerun: bool) -> None:
    """Two identical calls observe one thing once; a different call reading another record is a
    second observation (the same record read by two queries is one: ``test_independent_sources``)."""
    second = dict(arguments) if rerun else {**arguments, "start": "2026-07-07T09:00:00Z"}
    other = LOG_OUTPUT if rerun else LOG_OUTPUT.replace("10:01:02", "09:31:07")
    assert rerun or other != LOG_OUTPUT
    store = InMemoryInvocations([invocation(601, arguments=arguments), invocation(602, arguments=second, output=other)])
    cause = claim(
        text="支付超时是因为连接池被占满",
        claim_type="root_cause",
        bindings=[binding([601], "request timeout"), binding([602], "request timeout")],
    )
    report = _GATEKEEPER.validate(v2([cause]), session_id=SESSION, invocations=store)
    (check,) = [c for t in report.claim_traces for c in t.checks if c.rule_id == "claim.root_cause_support"]
    assert check.outcome == ("warn" if rerun else "pass"), check.reason
    assert ("1 independent" in check.reason) is rerun


@given(
    st.sampled_from([(w, c) for kind in ("absolute", "state", "direction", "evaluative") for w, c in _words(kind)]),
    st.sampled_from([" ", "，", "(", "\n", "订单"]),
    st.sampled_from([" ", "。", ")", "\n", "了"]),
    st.booleans(),
)
def test_a_concept_word_is_found_however_it_is_set_and_cased(
    word: tuple[str, str], before: str, after: str, upper: bool
) -> None:
    """Every claim word of the vocabulary is found whole, in any case, with its words spread over
    any blanks; glued to Latin letters it is another word."""
    concept, text = word
    written = "  ".join(text.split())
    written = written.upper() if upper else written
    found = concepts().in_claim(f"x{before}{written}{after}y")
    assert concept in {hit.concept for hit in found}
    if text.isascii():
        assert concept not in {hit.concept for hit in concepts().in_claim(f"zz{written}zz")}


def _word_by_word(words: list[str]) -> re.Pattern[str]:
    """The evidence words of a concept as one alternative each, with its own boundaries (a word
    boundary, or a camel-case part's): what ``states`` finds, written the slow way."""
    head = r"(?:(?<![A-Za-z0-9_])|(?-i:(?<=[a-z0-9])(?=[A-Z])))"
    tail = r"(?:(?![A-Za-z0-9_])|(?-i:(?=[A-Z])))"
    parts = []
    for word in sorted(set(words), key=len, reverse=True):
        body = r"\s+".join(map(re.escape, word.split()))
        latin_head, latin_tail = (c.isascii() and c.isalnum() for c in (word[0], word[-1]))
        parts.append((head if latin_head else "") + body + (tail if latin_tail else ""))
    return re.compile("|".join(parts), re.IGNORECASE)


_EVIDENCE_WORDS = {
    name: [w.replace("_", " ") for w in (*entry.words, *entry.evidence)]
    for name, entry in _vocabulary().concepts.items()
    if entry.words or entry.evidence
}
#: The negations a word after them is denied by (the vocabulary's own).
_NEGATION = re.compile("|".join(map(re.escape, _vocabulary().negations)), re.IGNORECASE)
#: Evidence words that deny nothing after them, nor end in a field's mark ("cost="): next to each
#: other they state what they say.
_UNDENIED_WORDS = sorted(
    {w for words in _EVIDENCE_WORDS.values() for w in words if not _NEGATION.search(w) and w[-1] not in ":="}
)


@given(
    st.sampled_from(sorted(_EVIDENCE_WORDS)),
    st.lists(
        st.tuples(
            st.sampled_from(_UNDENIED_WORDS),
            st.sampled_from(["lower", "upper", "title", "camel"]),
            st.sampled_from([" ", "", "_", "x", "X", "7", "-", "，", "中", "\n", "\u017f", "\u212a", "\u0130"]),
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_a_concept_is_stated_where_one_of_its_words_stands_whole(
    concept: str, pieces: list[tuple[str, str, str]]
) -> None:
    """Its words share their boundary checks in one pattern, compiled on first use: the same
    evidence states the concept as with a boundary written on each word."""
    text = "".join(
        (word.upper() if case == "upper" else word.title().replace(" ", "") if case == "camel" else word.title()) + glue
        if case != "lower"
        else word + glue
        for word, case, glue in pieces
    )
    expected = _word_by_word(_EVIDENCE_WORDS[concept]).search(reader_text(text).replace("_", " ")) is not None
    assert concepts().states(concept, text) is expected, text


def test_a_concepts_evidence_pattern_is_compiled_when_first_asked_for() -> None:
    """A session checks a few of the ~20 concepts against its evidence: their patterns are
    compiled then, each once (all of them up front cost ~60 ms of a demo ``ask``, measured)."""
    vocabulary = Concepts(_vocabulary())
    with patch("veridiag.text.concepts._alternation", wraps=concepts_module._alternation) as written:
        assert vocabulary.states("timeout", "ERR_TIMEOUT request timeout")
        assert not vocabulary.states("timeout", "request handled")
        assert not vocabulary.states("not-a-concept", "timeout")
    assert written.call_count == 1


@given(
    st.sampled_from([w for w in _words("absolute") if w[0] != "always"]),
    st.integers(2, 40),
    st.sampled_from(["services", "个服务", "台机器", "hosts"]),
)
def test_an_absolute_over_a_counted_set_is_the_count(word: tuple[str, str], count: int, noun: str) -> None:
    """ "none of the 6 services examined", "3 台机器都": the number bounds the absolute (one over a
    set: *always* is over time, see ``test_always_at_a_level_is_no_count``); an order number does
    not (see above)."""
    _, reason = _outcome(f"Not CPU: {word[1]} of the {count} {noun} examined changed")
    assert not _beyond(reason), (word, reason)


@given(st.sampled_from(["都", "均", "全部"]), st.sampled_from(["没有", "无", "未"]), st.sampled_from(["不", "不能"]))
def test_an_absolute_absence_is_a_zero_count_but_an_absolute_negated_verb_is_all(
    absolute: str, absence: str, verb_negation: str
) -> None:
    """ "检查的服务都没有重启" states none restarted (the counts check it); "所有请求都不成功" still
    claims every request."""
    assert _outcome(f"检查的服务{absolute}{absence}重启")[0] == "pass"
    assert _outcome(f"订单123的请求{absolute}{verb_negation}成功")[0] == "warn"


@given(
    st.sampled_from(_words("state")),
    st.sampled_from(["没有记录到任何变更（发布、配置、{w}）", "no changes recorded (deploys, configs or {w})"]),
)
def test_an_absence_denies_the_rest_of_its_clause(word: tuple[str, str], form: str) -> None:
    assert _outcome(form.format(w=word[1]))[0] == "pass"
    # ... and no further: the next clause claims again.
    assert _outcome(form.format(w="x") + f"；订单123的请求 {word[1]}")[0] == "warn"


def test_a_compound_holding_a_concept_word_is_not_it() -> None:
    assert _outcome("按延迟排序（15:00–16:00 的平均值）")[0] == "pass"
    assert _outcome("订单123的请求均超时")[0] == "warn"


@given(st.sampled_from(_words("state")))
def test_a_negation_quoted_from_the_evidence_still_denies_what_follows(word: tuple[str, str]) -> None:
    """The claim copies "no change feed imported" from its line: the copied words are the line's,
    yet the "no" they hold still denies the claim's list after them."""
    line = "no change feed imported: changes cannot be checked (veridiag data import-changes)"
    outcome, reason = _outcome(
        f"Changes cannot be checked: no change feed (deploys, {word[1]}) was imported", line, line
    )
    assert outcome == "pass", reason


_METRIC_LINE = "window: min 0.2%, max 12.49%, avg 10.16% (30 points); peak 12.49% at 2026-07-07T08:21:00Z"


@given(
    st.sampled_from(
        [
            ("gateway_error_rate", "The gateway's {w} rose to a peak of 12.49%", "error rate"),
            ("upstream_timeouts_total", "上游{w}次数峰值 12.49%", "超时"),
            ("mysql_lock_wait_p99_seconds", "{w} p99 峰值 12.49%", "锁等待"),
            ("mysql_slow_queries_per_minute", "{w}峰值 12.49%", "慢查询"),
        ]
    ),
    st.booleans(),
)
def test_what_a_series_is_about_may_stand_in_what_the_call_asked(case: tuple[str, str, str], asked: bool) -> None:
    """A value line quotes no name: "the error rate rose to 12.49%" citing ``peak 12.49%`` of
    the series ``gateway_error_rate`` states an error; the same words citing a series of
    something else interpret."""
    metric, form, word = case
    outcome, reason = _outcome(
        form.format(w=word), _METRIC_LINE, _METRIC_LINE, {"metric": metric if asked else "cpu_percent"}
    )
    if asked:
        assert "interprets" not in reason, reason
    else:
        assert outcome == "warn" and "interprets" in reason, reason


@given(st.sampled_from(["都是", "全部是", "均为", "all are"]), st.integers(2, 900))
def test_an_absolute_opening_a_clause_sums_up_the_count_before_it(absolute: str, count: int) -> None:
    line = f"{count}× WARN 2026-07-07T15:00:07Z Query_time: <*> UPDATE t_stock SET qty=qty-1"
    assert _outcome(f"记录了 {count} 条日志，{absolute} UPDATE t_stock 语句", line, line)[0] == "pass"
    assert _outcome(f"订单123的请求{absolute} UPDATE t_stock 语句", line, line)[0] == "warn"


@given(st.integers(0, 500), st.integers(1, 500), st.sampled_from(_words("direction")))
def test_a_direction_its_own_from_to_numbers_give_is_stated_by_them(low: int, rise: int, word: tuple[str, str]) -> None:
    high = low + rise
    first, last = (low, high) if word[0] == "up" else (high, low)
    line = f"window: min {low} connections, max {high} connections (30 points)"
    end = "a peak of" if word[0] == "up" else "a low of"  # the statistic its end is (a fall ends at the min)
    outcome, reason = _outcome(f"pending connections {word[1]} from {first} to {end} {last}", line, line)
    assert "runs against" not in reason and outcome == "pass", reason
    outcome, reason = _outcome(f"pending connections {word[1]} from {last} to {end} {first}", line, line)
    assert outcome == "fail" and "runs against its own numbers" in reason, reason


@given(
    st.sampled_from(
        ["第一条错误也出现在同一秒", "the first error came at the same moment", "the error rate was down to 5.85%"]
    )
)
def test_a_time_coincidence_or_a_level_is_no_sameness_or_outage(text: str) -> None:
    line = "2026-07-07T14:00:05Z ERROR order-service ERR_ORDER_VALIDATION last 5.85%"
    _, reason = _outcome(text, line, line)
    assert "same" not in reason and "crashed" not in reason, reason


@given(
    st.lists(st.integers(0, 23 * 60 + 58), min_size=2, max_size=6, unique=True),
    st.sampled_from(["The first {c} came at {t}", "{c} 首次出现在 {t}", "最早的 {c} 在 {t}"]),
    st.sampled_from(["OutOfMemoryError", "ERR_TIMEOUT"]),
)
def test_a_first_at_a_time_is_checked_against_every_line_of_the_thing(minutes: list[int], form: str, code: str) -> None:
    """ "The first OutOfMemoryError came at 12:30" is false when a cited line shows one at 12:00,
    whichever line the claim quotes."""
    ordered = sorted(minutes)
    assume(all(b - a > 1 for a, b in pairwise(ordered)))
    lines = [f"2026-07-07T{m // 60:02d}:{m % 60:02d}:41Z ERROR inventory-service {code} heap" for m in minutes]
    output = "\n".join(lines)

    def said(minute: int) -> str:
        return form.format(c=code, t=f"{minute // 60:02d}:{minute % 60:02d}")

    assert "contradicts" not in _outcome(said(ordered[0]), output, lines[0])[1]
    late = lines[minutes.index(ordered[-1])]
    outcome, reason = _outcome(said(ordered[-1]), output, late)
    assert outcome == "fail" and "its cited output shows" in reason, reason


@given(
    st.integers(0, 23 * 3600),
    st.lists(st.integers(2, 50), min_size=1, max_size=4),
    st.sampled_from(["第一次 {c} 错误出现在 {t}", "The first {c} error came at {t}", "{c} 最早出现在 {t}"]),
    st.sampled_from(["10061", "ERR_PROXY_REFUSED", "11001"]),
)
@example(5 * 3600 + 5 * 60 + 53, [3], "第一次 {c} 错误出现在 {t}", "10061")
def test_a_first_written_to_the_second_is_checked_to_the_second(
    start: int, gaps: list[int], form: str, code: str
) -> None:
    """ "第一次 10061 错误出现在 05:05:56" when the first is at 05:05:53, three seconds before: a
    clock to the second is checked to the second, and a bare code of the lines is their subject."""
    seconds = [start + sum(gaps[:i]) for i in range(len(gaps) + 1)]
    clock = [f"{t // 3600 % 24:02d}:{t // 60 % 60:02d}:{t % 60:02d}" for t in seconds]
    lines = [f"[07.27 {c}] Dropbox.exe - bolt.dropbox.com:443 error : failed with error {code}" for c in clock]
    output = "\n".join(lines)
    assert "contradicts" not in _outcome(form.format(c=code, t=clock[0]), output, lines[0])[1]
    outcome, reason = _outcome(form.format(c=code, t=clock[1]), output, lines[1])
    assert outcome == "fail" and "its cited output shows" in reason, (clock, reason)


@given(
    st.lists(st.integers(0, 22 * 60), min_size=2, max_size=5, unique=True),
    st.sampled_from(
        [("伦敦时间", "Europe/London"), ("Berlin time", "Europe/Berlin"), ("New York time", "America/New_York")]
    ),
    st.dates(date(2024, 1, 1), date(2027, 12, 31)),
    st.sampled_from(["第一条出现在{z} {t}，ERR_TIMEOUT", "The first ERR_TIMEOUT came at {t} {z}"]),
)
def test_a_first_in_a_zone_of_two_seasons_is_read_in_the_season_of_its_lines(
    minutes: list[int], zone: tuple[str, str], day: date, form: str
) -> None:
    """ "第一条出现在伦敦时间 15:00:05" of a line at 14:00:05Z in July is true (summer time): a
    zone read two ways contradicts a first only when every reading does."""
    ordered = sorted(minutes)
    assume(all(b - a > 1 for a, b in pairwise(ordered)))
    words, key = zone
    lines = [f"{day.isoformat()}T{m // 60:02d}:{m % 60:02d}:05Z ERROR order-service ERR_TIMEOUT" for m in minutes]
    first = datetime.combine(day, time(ordered[0] // 60, ordered[0] % 60, 5), UTC).astimezone(ZoneInfo(key))
    claim = form.format(z=words, t=first.strftime("%H:%M:%S"))
    outcome, reason = _outcome(claim, "\n".join(lines), lines[minutes.index(ordered[0])])
    assert "contradicts" not in reason, reason
    last = datetime.combine(day, time(ordered[-1] // 60, ordered[-1] % 60, 5), UTC).astimezone(ZoneInfo(key))
    late = form.format(z=words, t=last.strftime("%H:%M:%S"))
    outcome, reason = _outcome(late, "\n".join(lines), lines[minutes.index(ordered[-1])])
    assert outcome == "fail" and "its cited output shows" in reason, reason


@given(
    st.sampled_from([("低了一半", 0.5), ("翻倍了", 2), ("halved", 0.5), ("doubled", 2), ("tripled", 3)]),
    st.integers(10, 900),
)
def test_a_ratio_written_as_a_word_is_a_ratio(word: tuple[str, float], base: int) -> None:
    spelled, ratio = word
    line = f"peak {round(base * ratio)}ms at 2026-07-07T10:08:00Z; expected {base}ms"
    outcome, reason = _outcome(f"峰值 {round(base * ratio)}ms，比基线 {base}ms {spelled}", line, line)
    assert outcome == "pass", reason  # computed from its numbers
    outcome, reason = _outcome(f"温度比平时{spelled}", "temperature 71.2 at 10:08", "temperature 71.2 at 10:08")
    assert outcome == "warn" and reason.startswith("unstated") and "ratio" in reason, reason


@given(st.sampled_from(["about half an hour before", "a minute and a half before", "半小时之前"]))
def test_half_of_a_duration_is_no_ratio(words: str) -> None:
    line = "2026-07-07T11:28:30Z inventory-service release: sku cache enabled"
    assert "ratio" not in _outcome(f"The release came at 11:28, {words} the errors", line, line)[1]


@given(st.sampled_from(["millicore", "second", "gigabyte", "core", "minute"]), st.sampled_from(["a", "an"]))
def test_half_a_unit_is_an_amount_no_ratio(unit: str, article: str) -> None:
    """ "About half a millicore": an amount (0.5 of a unit), not half of something else."""
    line = "2022-08-22T07:27:26Z 18.16 m"
    text = f"The pod went from about half {article} {unit} to 18.16 m at the peak."
    assert "ratio" not in _outcome(text, line, line)[1]


# --- structure states what a word would: a template covering every matched line, a constant window ----


@given(st.integers(1, 900), st.integers(0, 3), st.sampled_from(["这些错误都是 {code}", "all of them were {code}"]))
def test_a_template_covering_every_matched_line_states_all(count: int, short: int, form: str) -> None:
    """Quoting "12×" of "matched 12 lines" quotes all of them; of "matched 15 lines", not — and
    "1×" of "matched 1 line", as the tools write a count of one."""
    template = f"  {count}× ERROR 2026-07-07T14:00:05Z – 2026-07-07T14:27:56Z ERR_ORDER_VALIDATION coupon is null"
    matched = count + short
    noun = "line" if matched == 1 else "lines"
    output = f"query_logs service=order-service\nmatched {matched} {noun} (ERROR {matched})\ntemplates:\n{template}\n"
    outcome, reason = _outcome(form.format(code="ERR_ORDER_VALIDATION"), output, template.strip())
    assert (outcome == "pass") is (short == 0), reason


@given(
    st.integers(1, 500),
    st.integers(0, 40),
    st.sampled_from(["整个窗口内活跃连接数一直是 {v}", "it stayed at {v} the whole time"]),
)
def test_a_window_whose_min_is_its_max_states_always(value: int, spread: int, form: str) -> None:
    line = f"window: min {value} connections, max {value + spread} connections, avg {value} connections (30 points)"
    outcome, reason = _outcome(form.format(v=value), line, line)
    assert (outcome == "pass") is (spread == 0), reason


@given(
    st.sampled_from(["前后", "和", "与", "及", "、"]),
    st.sampled_from(["都", "均", "全都"]),
)
def test_a_distributive_word_over_things_named_one_by_one_is_no_overgeneralisation(
    enumeration: str, distributive: str
) -> None:
    line = "2026-07-07T11:45:08Z WARN inventory-service [GC] Full GC (Allocation Failure) 1931M->1925M(2048M), 2.31s"
    if enumeration == "前后":
        text = f"11:45:08 的 Full GC 前后堆占用{distributive}约 1.9 GB"
    else:
        text = f"inventory-service {enumeration} GC 线程{distributive}在 11:45:08 停顿"
    outcome, reason = _outcome(text, line, line)
    assert not _beyond(reason), (text, reason)
    # 所有 still claims all, whatever its clause names
    outcome, reason = _outcome(f"inventory-service {enumeration} GC 所有停顿都在 11:45:08", line, line)
    assert outcome == "warn" and reason.startswith("absolute"), reason


def test_an_inference_names_a_state_any_cited_output_of_the_session_states() -> None:
    """ "这很可能是支付超时的根因": the timeouts are another call's observation; a direct claim
    still needs its own lines to state them."""
    timeouts = "2026-07-07T10:00:00Z ERROR payment-service order=886991 ERR_TIMEOUT request timeout cost=5213ms"
    change = "2026-07-07T09:58:03Z payment-service config: maximum-pool-size=50 (was 100)"
    store = InMemoryInvocations([invocation(501, output=timeouts), invocation(502, output=change)])
    for level, expected in (("indirect", "pass"), ("direct", "warn")):
        claims = [
            claim("claim-1", "payment-service 出现 ERR_TIMEOUT", [binding([501], "ERR_TIMEOUT request timeout")]),
            claim(
                "claim-2",
                "09:58 连接池上限调成了 50，这很可能是支付超时的原因",
                [binding([502], change)],
                claim_type="observation",
                support_level=level,
            ),
        ]
        report = _GATEKEEPER.validate(v2(claims), session_id=SESSION, invocations=store)
        (check,) = [
            c
            for t in report.claim_traces
            if t.claim_id == "claim-2"
            for c in t.checks
            if c.rule_id == "claim.stated_content"
        ]
        assert check.outcome == expected, (level, check.reason)


# --- "N times": a count, or a ratio when it compares ---------------------------------------------------


@given(
    st.integers(2, 9),
    st.sampled_from(
        ["CPU went up {k} times at 03:54", "latency was {k} times higher than usual", "{k} times the median"]
    ),
)
def test_n_times_that_compares_is_a_ratio(k: int, form: str) -> None:
    line = "2022-08-22T03:54:19Z 80.53%"
    outcome, reason = _outcome(form.format(k=k), line, line)
    assert outcome == "warn" and "ratio" in reason, reason


@given(st.integers(2, 99), st.sampled_from(["getAllFood failed {k} times", "retried {k} times over the hour"]))
def test_n_times_that_counts_is_no_ratio(k: int, form: str) -> None:
    line = "2026-07-07T10:00:00Z ERROR food-service getAllFood failed"
    _, reason = _outcome(form.format(k=k), line, line)
    assert "ratio" not in reason, reason


@given(st.sampled_from([w for name, w in _words("state") if name == "lost"]))
def test_lost_is_an_interpretation_counts_do_not_state(word: str) -> None:
    line = (
        "2017-05-16 00:09:12 WARNING nova.compute.manager While synchronizing instance power states, "
        "found 1 instances in the database and 0 instances on the hypervisor."
    )
    outcome, reason = _outcome(f"The hypervisor {word} the instance at 00:09", line, line)
    assert outcome == "warn" and reason.startswith("unstated"), reason


# --- a cause one line shows, a derivation from the claim's own lines --------------------------------------

_CAUSE_WORDS = st.sampled_from(["because", "due to", "导致的", "引起的", "caused by"])


@given(
    st.sampled_from(["getAllFood", "OrderValidator", "checkoutHandler"]),
    st.sampled_from(["foodStoresListResult", "couponCode", "paymentToken"]),
    _CAUSE_WORDS,
)
def test_a_cause_one_quoted_line_shows_with_its_effect_is_that_lines_reading(
    effect: str, cause: str, word: str
) -> None:
    """ "X failed because Y was null" of a line "[X][Failed!][Y is null]" reads one line; the same
    words across two lines, on a line that itself says a cause word, or typed root_cause, still
    need two independent observations."""
    line = f"2023-01-29T09:31:11Z ERROR food-service [{effect}][Request Failed!][{cause} is null]"
    text = f"{effect} failed {word} {cause} was null" if word.isascii() else f"{cause} 为空{word} {effect} 失败"

    def outcome(output: str, excerpt: str, claim_type: str = "symptom") -> str:
        store = InMemoryInvocations([invocation(701, output=output)])
        made = claim(text=text, bindings=[binding([701], excerpt)], claim_type=claim_type)
        report = _GATEKEEPER.validate(v2([made]), session_id=SESSION, invocations=store)
        checks = [c for t in report.claim_traces for c in t.checks if c.rule_id == "claim.root_cause_support"]
        return checks[0].outcome if checks else "none"

    assert outcome(line, line) == "none"
    assert outcome(line, line, "root_cause") == "warn"
    split = (
        f"2023-01-29T09:31:11Z ERROR food-service [{effect}][Request Failed!]\n"
        f"2023-01-29T09:31:12Z WARN food-service [{cause} is null]"
    )
    assert outcome(split, split) == "warn"
    asserted = line.replace("[Request Failed!]", "[Request Failed because]")
    assert outcome(asserted, asserted) == "warn"


@given(st.integers(2, 9))
def test_a_duration_is_derived_from_the_claims_own_lines_not_the_calls_record(hours: int) -> None:
    """The retrieval details list every episode: two of their times give some duration; the
    claim's own line must."""
    own = "anomaly 1: 2013-12-21T20:00:00Z – 2013-12-23T13:00:00Z (41 points, 41 h) up"
    other = f"anomaly 2: 2013-12-24T05:00:00Z – 2013-12-24T{5 + hours:02d}:00:00Z up"
    details = {"anomalies": [{"onset": "2013-12-24T05:00:00Z", "end": f"2013-12-24T{5 + hours:02d}:00:00Z"}]}
    store = InMemoryInvocations([invocation(702, output=f"{own}\n{other}", retrieval_details=details)])
    made = claim(text=f"The high spell lasted about {hours} hours.", bindings=[binding([702], "(41 points, 41 h) up")])
    report = _GATEKEEPER.validate(v2([made]), session_id=SESSION, invocations=store)
    (check,) = [
        c
        for t in report.claim_traces
        for c in t.checks
        if c.rule_id == "claim.entity_grounding" and c.target.endswith("claim_text")
    ]
    assert check.outcome in ("warn", "fail"), check.reason
    made = claim(text="The high spell lasted about 41 hours.", bindings=[binding([702], "(41 points, 41 h) up")])
    report = _GATEKEEPER.validate(v2([made]), session_id=SESSION, invocations=store)
    assert "claim.entity_grounding" not in report.result.failed_rules
    assert not report.result.warnings, report.result.warnings


@given(st.sampled_from(["所有接口都返回了 {v}", "all of them were on node-{v}", "every request carried code={v}"]))
def test_a_template_states_all_only_of_what_it_does_not_vary(form: str) -> None:
    """ "12× … status: <*>" of 12 matched lines says nothing of all their statuses."""
    template = '  12× INFO 2017-05-16T00:00:21Z – 2017-05-16T00:14:09Z node-<*> "POST <*>" status: <*> code=<*>'
    output = f"query_logs service=nova-api\nmatched 12 lines (INFO 12)\ntemplates:\n{template}\n"
    outcome, reason = _outcome(form.format(v="404"), output, template.strip())
    assert outcome == "warn" and reason.startswith("absolute"), reason


@given(
    st.from_regex(r"[a-z]{3,6}[A-Z][a-z]{2,6}", fullmatch=True),
    st.integers(0, 9),
    st.sampled_from(
        ["Every refusal is preceded by a startSync with {f}.", "每次同步都带着 {f}。", "all of them ran with {f}"]
    ),
    st.booleans(),
)
def test_a_field_the_template_varies_is_no_value_of_all_its_lines(
    key: str, value: int, form: str, varies: bool
) -> None:
    """ "Every refusal is preceded by a startSync with syncAction=2" quoting the example of a
    template "startSync … {syncAction=<*>, …}" that is every matched line: the template holds all
    its lines' constant text, not the value one line gives its varying field; a field the template
    writes as it is (``syncAction=2``) is every line's."""
    field = f"{key}={value}"
    head = f"{key}=<*>" if varies else field
    template = (
        f"  5× INFO 2017-12-23T22:19:58Z – 2017-12-24T00:32:28Z startSync hiSyncOption = {{{head}, syncMethod=<*>}}"
    )
    example = (
        f"     e.g. 20171223-22:19:58:419|HiH_HiSyncControl|30002312|startSync hiSyncOption = {{{field}, syncMethod=2}}"
    )
    output = (
        f"query_logs service=healthapp query=startSync\nmatched 5 lines (INFO 5)\ntemplates:\n{template}\n{example}\n"
    )
    outcome, reason = _outcome(form.format(f=field), output, field)
    if varies:
        assert outcome == "warn" and reason.startswith("absolute"), reason
    else:
        assert outcome == "pass", reason


def test_an_outputs_only_template_and_only_anomaly_are_all_and_the_only() -> None:
    template = "  7× ERROR 2026-07-07T10:00:00Z – 2026-07-07T10:05:00Z RedisConnectionException: Unable to connect"
    output = f"query_logs service=cart\nmatched 7 lines (ERROR 7)\ntemplates:\n{template}\nlines:\n"
    line = "2026-07-07T10:00:01Z ERROR cart RedisConnectionException: Unable to connect"
    outcome, reason = _outcome("All of the errors were RedisConnectionException", output + line, line)
    assert outcome == "pass", reason
    anomaly = "anomaly 1: 2026-07-07T10:00:00Z – 2026-07-07T10:29:00Z (30 points, 29 min) up; ×4.55"
    metrics = f"query_metrics service=cart metric=cpu\n{anomaly}\npoints:\n"
    assert _outcome("This was the only anomaly of the window", metrics, anomaly)[0] == "pass"
    second = metrics.replace(
        "points:", "anomaly 2: 2026-07-07T11:00:00Z – 2026-07-07T11:09:00Z (10 points) up\npoints:"
    )
    assert _outcome("This was the only anomaly of the window", second, anomaly)[0] == "warn"


@given(st.sampled_from([w for name, w in _words("state") if name in ("blocked", "leak", "crashed")]))
def test_an_inference_may_interpret_and_is_labelled_an_inference(word: str) -> None:
    line = "2026-07-07T15:00:00Z db_connections 93"
    for level, expected in (("indirect", "inferred"), ("direct", "unstated")):
        store = InMemoryInvocations([invocation(801, output=line)])
        made = claim(
            text=f"orders were most likely hit by {word}",
            bindings=[binding([801], line)],
            claim_type="observation",
            support_level=level,
        )
        report = _GATEKEEPER.validate(v2([made]), session_id=SESSION, invocations=store)
        (check,) = [c for t in report.claim_traces for c in t.checks if c.rule_id == "claim.stated_content"]
        assert check.reason.startswith(expected), (level, check.reason)


@given(st.sampled_from(["loginFailed", "OnFailureEvent", "payment_failed", "TaskFailed"]))
def test_a_camel_case_event_name_states_its_words(event: str) -> None:
    line = f"2026-07-07T10:00:00Z event={event} user=42"
    assert _outcome("the login failed at 10:00", line, line)[0] == "pass"


@given(st.integers(20, 90), st.integers(91, 99))
def test_a_rise_and_its_fall_back_tell_one_episode(low: int, peak: int) -> None:
    line = f"anomaly 1: 2026-07-07T10:00:00Z – 2026-07-07T10:05:00Z (6 points, 5 min) up; peak {peak}%"
    outcome, reason = _outcome(f"CPU rose to {peak}% and fell back to {low}% by 10:06", line, line)
    assert not reason.startswith("contradicts"), reason
    outcome, reason = _outcome(f"CPU fell to {low}% at 10:02", line, line)
    assert outcome == "fail" and reason.startswith("contradicts"), reason


@given(st.integers(2, 40), st.integers(41, 99))
def test_to_before_from_is_read_the_right_way_round(low: int, high: int) -> None:
    line = f"2022-08-22T03:53:19Z {low}%\n2022-08-22T03:54:19Z {high}%"
    _, reason = _outcome(f"CPU jumped to {high}% at 03:54, up from {low}% a minute earlier", line, line)
    assert not reason.startswith("contradicts"), reason
    _, reason = _outcome(f"CPU dropped to {low}% at 03:54, down from {high}% a minute earlier", line, line)
    assert not reason.startswith("contradicts"), reason


def test_a_direction_its_cited_output_states_one_way_is_stated() -> None:
    output = (
        "anomaly 1: 2022-08-22T03:56:19Z – 2022-08-22T03:59:20Z (3 points, 3 min) up; peak 104.87%\n"
        "points:\n2022-08-22T03:56:19Z 100.23%"
    )
    point = "2022-08-22T03:56:19Z 100.23%"
    assert _outcome("CPU spiked to 100.23% at 03:56", output, point)[0] == "pass"
    both = output.replace("points:", "anomaly 2: 2022-08-22T04:10:00Z – 2022-08-22T04:12:00Z (2 points) down\npoints:")
    assert _outcome("CPU spiked to 100.23% at 03:56", both, point)[1].startswith("inferred")


@given(st.integers(2, 30), st.sampled_from(["the job failed {k} times, twice at 10:00", "it restarted twice"]))
def test_twice_that_counts_is_no_ratio(k: int, form: str) -> None:
    line = "2026-07-07T10:00:00Z ERROR job failed"
    assert "ratio" not in _outcome(form.format(k=k), line, line)[1]
    assert "ratio" in _outcome("latency was twice the median", line, line)[1]


@given(st.integers(110, 900), st.sampled_from(["CPU was {p}% of expected", "CPU 是预期的 {p}%"]))
def test_a_percentage_of_the_expected_value_is_a_ratio(percent: int, form: str) -> None:
    factor = percent / 100
    line = f"anomaly 1: 2022-08-22T03:56:19Z – 2022-08-22T03:59:20Z up; expected 27.39%; ×{factor:.2f}; score 4.3"
    assert _outcome(form.format(p=percent), line, line)[0] == "pass"
    outcome, reason = _outcome(form.format(p=percent * 2), line, line)
    assert outcome == "warn" and "ratio" in reason, reason


# --- a bound over a period is computed over every point of the period ------------------------------------

_BOUND_FORMS = [
    ("at_most", "CPU never went above {t}% between {a} and {b}"),
    ("below", "{a} 到 {b} CPU 一直低于 {t}%"),
    ("at_most", "{a}–{b} 之间 CPU 都在 {t}% 以下"),
    ("above", "CPU stayed above {t}% the whole time from {a} to {b}"),
    ("above", "{a} 至 {b} CPU 始终高于 {t}%"),
]
_KEEPS = {
    "at_most": lambda v, t: v <= t,
    "below": lambda v, t: v < t,
    "above": lambda v, t: v > t,
}


@given(
    st.lists(st.integers(0, 100), min_size=4, max_size=30),
    st.integers(0, 100),
    st.sampled_from(_BOUND_FORMS),
    st.data(),
)
def test_a_bound_over_a_period_is_kept_by_every_point_or_contradicted(
    values: list[int], threshold: int, form: tuple[str, str], data: st.DataObject
) -> None:
    side, text = form
    first = data.draw(st.integers(0, len(values) - 2))
    last = data.draw(st.integers(first + 1, len(values) - 1))
    points = "\n".join(f"2026-07-07T10:{i:02d}:00Z {v}%" for i, v in enumerate(values))
    output = f"query_metrics service=api metric=cpu\npoints:\n{points}"
    quoted = f"2026-07-07T10:{first:02d}:00Z {values[first]}%\n2026-07-07T10:{last:02d}:00Z {values[last]}%"
    # a crossing near an end on a five-minute mark (five minutes, or a quarter of a shorter period)
    # is the edge the range rounded past; the middle of a short period is still judged
    near = min(5, (last - first) // 4)
    inside = [
        v
        for i, v in enumerate(values)
        if first <= i <= last and not any(abs(i - end) <= near for end in (first, last) if end % 5 == 0)
    ]
    if not inside:
        assert not _outcome(text.format(t=threshold, a=f"10:{first:02d}", b=f"10:{last:02d}"), "points:\n", "x")[
            1
        ].startswith("contradicts")
        return
    kept = all(_KEEPS[side](v, threshold) for v in inside)
    claim_text = text.format(t=threshold, a=f"10:{first:02d}", b=f"10:{last:02d}")
    outcome, reason = _outcome(claim_text, output, quoted)
    if kept:
        assert not _beyond(reason) and not reason.startswith("contradicts"), (claim_text, reason)
    else:
        assert outcome == "fail" and "bound is crossed" in reason, (claim_text, reason)


def test_a_point_above_a_threshold_is_no_bound_over_the_period() -> None:
    output = "points:\n2026-07-07T10:00:00Z 20%\n2026-07-07T10:05:00Z 95%"
    line = "2026-07-07T10:05:00Z 95%"
    _, reason = _outcome("CPU was above 90% at 10:05", output, line)
    assert not reason.startswith("contradicts"), reason


@given(
    st.sampled_from(["ERR_TIMEOUT stopped at 10:05", "10:05 之后 ERR_TIMEOUT 不再出现", "ERR_TIMEOUT 在 10:05 结束"])
)
def test_an_end_at_a_time_is_contradicted_by_a_later_line_of_the_thing(text: str) -> None:
    lines = "\n".join(f"2026-07-07T10:{m:02d}:00Z ERROR pay ERR_TIMEOUT request timeout" for m in (1, 3, 5, 9))
    outcome, reason = _outcome(text, lines, "2026-07-07T10:05:00Z ERROR pay ERR_TIMEOUT request timeout")
    assert outcome == "fail" and "10:09" in reason, reason
    ended = "\n".join(lines.splitlines()[:3])
    assert _outcome(text, ended, "2026-07-07T10:05:00Z ERROR pay ERR_TIMEOUT request timeout")[0] != "fail"


@given(st.sampled_from(["A traffic surge drove CPU to 95%", "流量激增推高了 CPU", "CPU was driven by a traffic surge"]))
def test_a_causal_verb_names_a_cause_needing_two_observations(text: str) -> None:
    line = "anomaly 1: 2022-08-22T03:56:19Z – 2022-08-22T03:59:20Z (3 points, 3 min) up; peak 95%"
    store = InMemoryInvocations([invocation(811, output=line)])
    report = _GATEKEEPER.validate(
        v2([claim(text=text, bindings=[binding([811], line)], claim_type="observation")]),
        session_id=SESSION,
        invocations=store,
    )
    (check,) = [c for t in report.claim_traces for c in t.checks if c.rule_id == "claim.root_cause_support"]
    assert check.outcome == "warn", check.reason


# --- points quoted, changes told backwards, the value at a clock -----------------------------------------


@given(st.lists(st.integers(1, 99), min_size=2, max_size=6, unique=True))
def test_the_quoted_points_state_their_direction(values: list[int]) -> None:
    quoted = "\n".join(f"2026-07-07T10:{i:02d}:00Z {v}%" for i, v in enumerate(values))
    output = f"query_metrics service=api metric=cpu\nanomalies: none\npoints:\n{quoted}"
    rises = any(b > a for i, a in enumerate(values) for b in values[i + 1 :])
    falls = any(b < a for i, a in enumerate(values) for b in values[i + 1 :])
    outcome, reason = _outcome("CPU spiked at 10:01", output, quoted)
    assert (outcome == "pass") is rises, reason
    if not rises:
        assert reason.startswith("contradicts"), reason
    outcome, reason = _outcome("CPU dropped at 10:01", output, quoted)
    assert (outcome == "pass") is falls, reason


def test_a_fall_back_after_an_episode_is_no_contradiction() -> None:
    line = "anomaly 1: 2026-07-07T10:00:00Z – 2026-07-07T10:05:00Z (6 points, 5 min) up; peak 95%"
    _, reason = _outcome("CPU fell back to 20% by 10:06", line, line)
    assert not reason.startswith("contradicts"), reason
    _, reason = _outcome("CPU fell to 20% at 10:03", line, line)
    assert reason.startswith("contradicts"), reason


@given(st.integers(10, 200), st.integers(201, 400))
def test_a_change_told_backwards_contradicts_its_line(new: int, old: int) -> None:
    line = f"2026-07-07T09:58:03Z payment-service config: maximum-pool-size={new} (was {old})"
    assert _outcome(f"连接池上限从 {old} 调成了 {new}", line, line)[0] != "fail"
    outcome, reason = _outcome(f"连接池上限从 {new} 调成了 {old}", line, line)
    assert outcome == "fail" and "not the other way" in reason, reason
    # the line quoted as it is: its values in its own order, no change told either way
    for quoting in (f"有一次配置变更：maximum-pool-size={new} (was {old})", f"the pool is now {new}, it was {old}"):
        assert "not the other way" not in _outcome(quoting, line, line)[1]


@given(st.lists(st.integers(1, 99), min_size=3, max_size=8), st.data())
def test_a_value_at_a_clock_is_the_series_point_there(values: list[int], data: st.DataObject) -> None:
    at = data.draw(st.integers(0, len(values) - 1))
    points = "\n".join(f"2026-07-07T10:{i:02d}:00Z {v}%" for i, v in enumerate(values))
    output = f"query_metrics service=api metric=cpu\npoints:\n{points}"
    line = f"2026-07-07T10:{at:02d}:00Z {values[at]}%"
    assert not _outcome(f"at 10:{at:02d} CPU was {values[at]}%", output, line)[1].startswith("contradicts")
    wrong = values[at] + 30
    outcome, reason = _outcome(f"at 10:{at:02d} CPU was {wrong}%", output, line)
    assert outcome == "fail" and "the cited series is" in reason, reason


def test_a_chinese_hour_before_a_count_is_on_the_hour() -> None:
    from veridiag.text.when import written_clocks

    assert [c.spelled for c in written_clocks("10 点一共有 30 条")] == ["10:00"]
    assert [c.spelled for c in written_clocks("凌晨 2 点一直在报错")] == ["02:00"]
    assert [c.spelled for c in written_clocks("十点十五开始")] == ["10:15"]


def test_a_bound_without_a_period_speaks_of_the_points_it_quotes() -> None:
    """ "Stayed above 90% for 20 minutes" is about the episode: points of the window before it
    do not cross it; a quoted point below it does."""
    points = "\n".join(f"2026-07-07T10:{m:02d}:00Z {v}%" for m, v in [(0, 20), (5, 95), (10, 96), (25, 92), (30, 30)])
    window = "window: min 20%, max 96%, avg 60%, last 30% (5 points)"
    output = f"query_metrics service=api metric=cpu\n{window}\npoints:\n{points}"
    quoted = "2026-07-07T10:05:00Z 95%\n2026-07-07T10:25:00Z 92%"
    _, reason = _outcome("CPU stayed above 90% for 20 minutes", output, quoted)
    assert not reason.startswith("contradicts"), reason
    _, reason = _outcome("CPU stayed above 93% for 20 minutes", output, quoted)
    assert reason.startswith("contradicts"), reason
    _, reason = _outcome("CPU never went above 96%", output, window)
    assert not _beyond(reason) and not reason.startswith("contradicts"), reason


@given(st.lists(st.sampled_from(["node-153", "node-246"]), min_size=2, max_size=8))
def test_all_on_one_host_is_stated_when_every_listed_line_names_it(hosts: list[str]) -> None:
    rows = [f"2004-05-11T0{i % 10}:00:00Z {h} unix.hw state_change.unavailable" for i, h in enumerate(hosts)]
    output = f"query_logs service=hpc\nmatched {len(rows)} lines\nlines:\n" + "\n".join(rows)
    one = len(set(hosts)) == 1
    for text in (f"All of the unavailable components were on {hosts[0]}", f"这些组件都来自同一台主机 {hosts[0]}"):
        outcome, reason = _outcome(text, output, rows[0])
        assert (outcome == "pass") is one, (text, reason)


# --- a number is the statistic its line labels it with ---------------------------------------------------

_STATISTICS = bundled_words("veridiag.text", "statistics.yaml", StatisticWords).statistics
_LABEL_FORMS = st.sampled_from(["{w} {v}", "{w}={v}", "{w}: {v}", "memory_{w}={v}", "{w}：{v}"])


@given(
    st.lists(st.sampled_from(sorted(_STATISTICS)), min_size=2, max_size=4, unique=True),
    st.lists(st.integers(100, 99999), min_size=4, max_size=4, unique=True),
    st.data(),
)
def test_a_claims_number_is_the_statistic_its_line_labels_it_with(
    names: list[str], values: list[int], data: st.DataObject
) -> None:
    """ "Memory peaked at 1303 MB" quoting "min 812 avg 1303 max 1740" names the average as the
    peak: caught, in any label form (``max=``, ``max:``, "peak", 最大值, a table's header) and any
    of the statistic's words; the number its own statistic labels is kept."""

    def label(name: str) -> str:
        return data.draw(st.sampled_from(_STATISTICS[name]))

    if data.draw(st.booleans()):
        line = "memory_mb " + " ".join(
            data.draw(_LABEL_FORMS).format(w=label(n), v=v) for n, v in zip(names, values, strict=False)
        )
    else:  # a table: a header row of labels over a row of values
        header = [label(n) for n in names]
        assume(all(" " not in h for h in header))
        line = "memory_mb\n" + " ".join(header) + "\n" + " ".join(map(str, values[: len(names)]))
    claimed, other = names[0], names[1]
    said = data.draw(st.sampled_from(["memory {w} {v} MB", "内存{w} {v} MB", "the {w} memory was {v} MB"]))
    right = said.format(w=label(claimed), v=values[0])
    wrong = said.format(w=label(claimed), v=values[1])
    assert "is its line's" not in _outcome(right, line, line)[1], (right, line)
    outcome, reason = _outcome(wrong, line, line)
    assert outcome == "fail" and f"is its line's {other}" in reason, (wrong, line, reason)


@given(
    st.integers(1, 400),
    st.integers(1, 400),
    st.integers(1, 400),
    st.sampled_from(
        sorted(set(_STATISTICS) - set(bundled_words("veridiag.text", "statistics.yaml", StatisticWords).series))
    ),
    st.sampled_from(["p99", "p95", "中位数", "median"]),
)
def test_a_statistic_word_binds_to_its_own_number(low: int, mid: int, high: int, window: str, series: str) -> None:
    """ "from 0.2% to a peak of 12.49%": the peak is the number after the word, not the one before;
    a series that is itself a percentile ("p99 reached 47.85 s") is not judged by its window's labels."""
    a, b, c = low, low + mid, low + mid + high
    line = f"lock_wait_p99_seconds: min {a} avg {b} max {c}"
    assert "is its line's" not in _outcome(f"lock wait rose from {a} s to a peak of {c} s", line, line)[1]
    assert "is its line's" not in _outcome(f"锁等待 {series} 达到 {c} 秒", line, line)[1]
    assert "is its line's" not in _outcome(f"lock wait {series} was {b} s", line, line)[1]
    labelled = f"{line} {window}={c + 1}"
    another = c if window == "min" else a  # a number its line labels with another statistic
    assert "is its line's" in _outcome(f"lock wait {_STATISTICS[window][0]} {another} s", labelled, labelled)[1]


_STATISTIC_SPELLINGS = sorted({word for words in _STATISTICS.values() for word in words})
#: What re.IGNORECASE matches to an ASCII letter from outside ASCII (İ ı ſ K).
_RECASED = {"i": ["\u0130", "\u0131"], "s": ["\u017f"], "k": ["\u212a"]}


@example("minimum", [0, 2], "", "")  # mİnimum
@example("lowest", [0, 0, 0, 0, 0, 2], "", "")  # loweſt
@given(
    st.sampled_from(_STATISTIC_SPELLINGS),
    st.lists(st.integers(0, 3), max_size=12),
    st.text(st.characters(categories=["Lo", "Ll", "Lu", "Nd", "Zs"]), max_size=20),
    st.text(st.characters(categories=["Lo", "Ll", "Lu", "Nd", "Zs"]), max_size=20),
)
def test_statistic_words_are_named_in_any_case_the_whole_word_pattern_reads(
    word: str, picks: list[int], before: str, after: str
) -> None:
    """``Statistics.named``'s quick look (literals over lower-cased text) misses no statistic the
    case-blind whole-word pattern finds, and names what it finds: upper case, and the four letters
    outside ASCII that re.IGNORECASE matches to ASCII ones ("mİnimum" raised a KeyError)."""
    letters = list(word)
    for i, pick in zip(range(len(letters)), picks, strict=False):
        forms = [letters[i], letters[i].upper(), *_RECASED.get(letters[i], [])]
        letters[i] = forms[pick % len(forms)]
    text = f"{before} {''.join(letters)} 1303 {after}"
    vocabulary = statistics()
    whole = {m.group() for m in vocabulary._word.finditer(text)}
    assert whole, ascii(text)  # the case-blind pattern reads every form generated here
    assert vocabulary.named(text) == {vocabulary._name(spelled) for spelled in whole}, ascii(text)
    assert _STATISTICS[next(iter(vocabulary.named(text)))] is not None


@given(st.sampled_from(_words("state") + _words("evaluative")))
def test_what_a_lists_heading_says_it_says_of_each_line_under_it(word: tuple[str, str]) -> None:
    """ "The slowest trace, 63d5…" quoting a line of the list titled "slowest traces of … :" is
    stated — by the heading the line stands under; the same line above that heading is not."""
    name, spelled = word
    line = "entry 7 a1b2c3 at 2026-07-07T10:05:00Z: node-3, 42 items"
    heading = f"{spelled} entries of gateway in the window (by size):"
    assume(not concepts().states(name, line) and concepts().states(name, heading))
    claim_text = f"The {spelled} entry, a1b2c3, holds 42 items."
    under = "\n".join(["query_x service=gateway", heading, line, "entry 8 d4e5f6: node-4, 7 items"])
    assert _outcome(claim_text, under, line)[0] == "pass", (word, _outcome(claim_text, under, line))
    above = "\n".join(["query_x service=gateway", line, heading, "entry 8 d4e5f6: node-4, 7 items"])
    outcome, reason = _outcome(claim_text, above, line)
    assert outcome == "warn", (word, reason)


_MULTI_WORD = sorted(
    (name, phrase)
    for name, entry in _vocabulary().concepts.items()
    for phrase in (*entry.words, *entry.evidence)
    if len(phrase.split()) > 1
)


@given(st.sampled_from(_MULTI_WORD), st.data())
def test_a_concept_phrase_stays_within_its_line(entry: tuple[str, str], data: st.DataObject) -> None:
    """ "seasonal: no" ending a line and "anomaly 1: … up" the next said "no anomaly": a listed
    phrase is read within one line, whichever blank a line break takes."""
    name, phrase = entry
    words = phrase.split()
    cut = data.draw(st.integers(1, len(words) - 1))
    assert concepts().states(name, f"x {phrase} y")
    broken = " ".join(words[:cut]) + "\n" + " ".join(words[cut:])
    # (no word of it states the concept alone: "up" of "was up to" does, on whichever line)
    assume(not any(concepts().states(name, word) for word in words))
    assert not concepts().states(name, f"x {broken} y"), (name, broken)


@given(st.sampled_from(_words("direction")), st.integers(1, 500), st.integers(1, 500))
def test_a_windows_extremes_give_no_direction(word: tuple[str, str], low: int, spread: int) -> None:
    """A window's min and max hold at times unsaid: a summary line alone states no rise or fall
    (its min, written first, made every direction "up": a true "fell" was contradicted)."""
    _name, spelled = word
    line = f"window: min {low}ms, max {low + spread}ms, avg {low + spread / 2}ms (30 points)"
    output = (
        f"query_metrics service=redis metric=p99\n{line}\nanomalies: none in the window against the series' own history"
    )
    outcome, reason = _outcome(f"redis p99 {spelled} in the window", output, line)
    assert outcome == "warn", (word, outcome, reason)


_FIELD_MARKS = st.sampled_from([":", "=", " : ", "：", " = ", ":\t"])


@given(
    st.sampled_from(_UNDENIED_WORDS),
    _FIELD_MARKS,
    st.one_of(
        st.sampled_from(_vocabulary().absences).map(lambda word: f"{word} span states a status"),
        st.sampled_from(["0", "0.0", "00", "0 ms", "0.00%", "0 of 340", "0,"]),
    ),
)
def test_a_field_named_by_a_concept_word_states_nothing_when_its_value_is_none(
    word: str, mark: str, value: str
) -> None:
    """ "errors: no span states a status", "timeouts=0", "错误：无": the field's name is no statement
    of what it names; what it holds is. (A level word's negation is its message's: below.)"""
    assume(not (word.isupper() and not value[0].isdigit()))
    concept = next(name for name, words in _EVIDENCE_WORDS.items() if word in words)
    line = f"ts-price-service {word}{mark}{value}"
    assert not concepts().states(concept, line), line


@given(
    st.sampled_from(_UNDENIED_WORDS),
    _FIELD_MARKS,
    st.one_of(
        st.integers(1, 10**6).map(str),
        st.decimals(min_value="0.01", max_value="999", places=2).map(lambda d: f"{d}%"),
        st.integers(1, 500).map(lambda n: f"{n} of 1200 spans"),
    ),
)
def test_a_field_named_by_a_concept_word_states_it_when_it_holds_some(word: str, mark: str, value: str) -> None:
    concept = next(name for name, words in _EVIDENCE_WORDS.items() if word in words)
    line = f"ts-price-service {word}{mark}{value}"
    assert concepts().states(concept, line), line


@given(st.sampled_from(_UNDENIED_WORDS), st.sampled_from(_vocabulary().absences), st.sampled_from([" ", "", " any "]))
def test_evidence_denying_a_concept_word_does_not_state_it(word: str, negation: str, glue: str) -> None:
    """ "no error count", "没有超时": the line states an absence, as a claim's negation does."""
    concept = next(name for name, words in _EVIDENCE_WORDS.items() if word in words)
    line = f"ts-price-service {negation}{glue if negation.isascii() else glue.strip()}{word} at 10:01"
    if negation.isascii() and word[0].isascii() and word[0].isalnum() and not glue:
        line = f"ts-price-service {negation} {word} at 10:01"
    assert not concepts().states(concept, line), line


@given(
    st.sampled_from(_UNDENIED_WORDS),
    st.sampled_from(
        [
            "order=123 retried with no backoff and {w} at 10:01",
            "order=123 {p} no retry {w} at 10:01",
            "订单123没有重试就{w}",
            "订单123{p}没有重试最终{w}",
        ]
    ),
    st.sampled_from(_vocabulary().negation_phrases),
)
def test_evidence_whose_negation_does_not_reach_a_concept_word_states_it(word: str, form: str, phrase: str) -> None:
    """A line's negation reaches as a claim's does: "with no backoff and failed", "with no retry
    failed" state the failure (a true claim of it was read as unstated)."""
    assume(phrase.isascii() == form.isascii())
    concept = next(name for name, words in _EVIDENCE_WORDS.items() if word in words)
    line = form.format(w=word, p=phrase)
    assert concepts().states(concept, line), line


def _two_lines_check(text: str, output: str, first: str, last: str) -> CheckRecord:
    """The content rule's check of a claim quoting two lines of one output."""
    store = InMemoryInvocations([invocation(394, output=output)])
    report = _GATEKEEPER.validate(
        v2([claim(text=text, bindings=[binding([394], first), binding([394], last)])]),
        session_id=SESSION,
        invocations=store,
    )
    (check,) = [c for t in report.claim_traces for c in t.checks if c.rule_id == "claim.stated_content"]
    return check


_STEADY_WORDS = [w for name, w in _words("evaluative") if name == "steady"]


@given(
    st.lists(st.integers(2, 400), min_size=3, max_size=12, unique=True),
    st.sampled_from(_STEADY_WORDS),
    st.booleans(),
    st.data(),
)
def test_a_course_point_by_point_is_stated_only_by_a_series_that_moves_one_way_between_its_ends(
    values: list[int], word: str, dip: bool, data: st.DataObject
) -> None:
    """ "rose steadily from 12 ms at 10:00 to 390 ms at 10:09": the two points it quotes say nothing of
    the way between; the cited series does, at every point."""
    rising = sorted(values)
    if dip:  # a point between the ends below the one before it
        at = data.draw(st.integers(1, len(rising) - 2))
        rising[at] = rising[at - 1] - 1
    lines = [f"2026-07-07T10:{minute:02d}:00Z {value}ms" for minute, value in enumerate(rising)]
    output = "query_metrics service=api metric=latency_p99_ms\n" + "\n".join(lines)
    first, last = lines[0], lines[-1]
    text = f"api latency rose {word} from {rising[0]}ms at 10:00 to {rising[-1]}ms at 10:{len(rising) - 1:02d}"
    check = _two_lines_check(text, output, first, last)
    if dip:
        assert check.outcome == "warn" and word in check.reason, (rising, check.reason)
    else:
        assert check.outcome == "pass", (rising, check.reason)


@given(
    st.integers(0, 23 * 60 + 58),
    st.integers(1, 120),
    st.integers(-30, 30),
    st.integers(-30, 30),
    st.sampled_from(["all", "every one of them", "都"]),
)
def test_all_within_two_clocks_is_stated_by_a_template_whose_lines_fall_between_them(
    first: int, length: int, early: int, late: int, word: str
) -> None:
    """ "26 of them are refused connections, all between 05:05 and 05:12": a template line gives
    its lines' first and last time; the claim's two clocks state *all* of them only when they hold
    that span (to the minute)."""
    last = min(first + length, 23 * 60 + 59)
    low, high = max(0, first + early), min(23 * 60 + 59, last + late)
    assume(low < high)

    def clock(minute: int) -> str:
        return f"{minute // 60:02d}:{minute % 60:02d}"

    template = (
        f"  26× INFO 2017-07-27T{clock(first)}:50Z – 2017-07-27T{clock(last)}:56Z "
        "<*> error : Could not connect to proxy <*> - connection attempt failed with error <*>"
    )
    output = f"matched 97 lines (INFO 97)\ntemplates:\n{template}\n  71× INFO <*> open through proxy <*>"
    text = f"26 of them failed to connect to the proxy, {word} between {clock(low)} and {clock(high)}"
    outcome, reason = _outcome(text, output, template.strip())
    if low <= first and last <= high:
        assert outcome == "pass", (text, template, reason)
    else:
        assert outcome == "warn" and reason.startswith("unstated") and "(all)" in reason, (text, template, reason)


@given(
    a=st.integers(1, 900),
    b=st.integers(1, 900),
    minute=st.integers(0, 58),
    later=st.integers(1, 59),
    claim_order=st.booleans(),
    word=st.sampled_from(["rose", "climbed", "上升", "dropped", "fell", "下降"]),
)
def test_two_values_tell_a_direction_in_the_order_of_their_lines_clocks_not_the_claims(
    *, a: int, b: int, minute: int, later: int, claim_order: bool, word: str
) -> None:
    """ "latency rose: 80ms at 10:05, 20ms at 10:00" names the later value first: its lines'
    clocks order them. A rise told against that order contradicts; told with it, it is stated."""
    assume(a != b and minute < later)
    first_line, last_line = f"2026-07-07T10:{minute:02d}:00Z {a}ms", f"2026-07-07T10:{later:02d}:00Z {b}ms"
    output = f"query_metrics service=api metric=latency_ms\n{first_line}\n{last_line}"
    pairs = [(a, minute), (b, later)] if claim_order else [(b, later), (a, minute)]
    text = f"api latency {word}: " + ", ".join(f"{v}ms at 10:{m:02d}" for v, m in pairs)
    check = _two_lines_check(text, output, first_line, last_line)
    up = word in ("rose", "climbed", "上升")
    if (b > a) == up:
        assert check.outcome == "pass", (text, check.reason)
    else:
        assert check.outcome == "fail" and check.reason.startswith("contradicts"), (text, check.reason)


@given(st.integers(1, 400), st.integers(1, 400), st.sampled_from(["rose", "spiked", "上升", "fell", "下降"]))
def test_a_windows_least_and_greatest_values_tell_no_direction_in_any_order(low: int, spread: int, word: str) -> None:
    """ "Latency rose, between 3 ms and 40 ms" quoting a window's min and max: they hold at times
    the line does not say, so the claim's order of them states no direction."""
    high = low + spread
    line = f"window: min {low}ms, max {high}ms, avg {low + spread // 2}ms, last {low}ms (60 points)"
    output = f"query_metrics service=api metric=latency_ms start=2026-07-07T10:00:00Z\n{line}"
    outcome, reason = _outcome(f"api latency {word}, between {low}ms and {high}ms", output, line)
    assert outcome == "warn" and reason.startswith("inferred"), (word, reason)


@given(st.text(alphabet=st.sampled_from([*"x×X1.5 -倍fold a_", "\u0663"]), max_size=24))
def test_a_multiple_is_found_where_the_pattern_without_its_first_character_test_finds_it(text: str) -> None:
    """``_MULTIPLE`` skips places by the character every match starts with (× x or a digit, any
    script's): it finds what ``MULTIPLE`` alone finds, groups and all."""
    plain = re.compile(MULTIPLE)
    found = [(m.span(), m.groupdict()) for m in stated_content._MULTIPLE.finditer(text)]
    assert found == [(m.span(), m.groupdict()) for m in plain.finditer(text)]


@given(
    st.sampled_from(_UNDENIED_WORDS),
    st.sampled_from(["", "_count", "_total", "_rate", ".count", "数", '_total{code="500"}', " rate", " count"]),
    st.sampled_from(['"', "'", ""]),
    st.one_of(_FIELD_MARKS, st.sampled_from([" => ", " | ", " "])),
    st.one_of(
        st.sampled_from(_vocabulary().empty_values).map(lambda value: f'"{value}"' if value.isalpha() else value),
        st.sampled_from(_vocabulary().empty_values),
        st.sampled_from(["0", "0.0%", "+0", "-0", "0, warnings=3", "0}"]),
    ),
)
def test_a_field_named_after_a_concept_word_states_nothing_when_empty(
    word: str, tail: str, quote: str, mark: str, value: str
) -> None:
    """'"errors": 0', "error_count=0", "http_errors_total{code="500"} 0", "errors=[]", "错误数：无": a
    counter or key named by a concept word, holding nothing, states no such thing (was: stated,
    so "payment-service had errors" citing '{"errors": 0}' was confirmed)."""
    concept = next(name for name, words in _EVIDENCE_WORDS.items() if word in words)
    assume(mark.strip() or not value.strip("\"'").isalpha())  # "errors none": no field, a phrase
    line = f"ts-price-service {quote}{word}{tail}{quote}{mark}{value} requests=340"
    assert not concepts().states(concept, line), line


@given(st.sampled_from(["failure", "timeout"]), st.sampled_from(["at 10:01", "requests=340", ""]))
@example("failure", "requests=340")
def test_a_false_state_citing_an_empty_counter_is_not_confirmed(concept: str, rest: str) -> None:
    word = {"failure": ("errors", "had errors"), "timeout": ("timeouts", "timed out")}[concept]
    for field in (f'{{"{word[0]}": 0}}', f"{word[0][:-1]}_count=0", f"{word[0]}=[]", f"{word[0]}: null"):
        line = f"2026-07-07T10:01:02Z payment-service {field} {rest}"
        outcome, reason = _outcome(f"payment-service {word[1]} at 10:01", line, line)
        assert outcome == "warn" and reason.startswith("unstated"), (line, reason)


@given(
    st.sampled_from([w for name, w in _words("state") if w.isascii() and name in ("failure", "timeout", "crashed")]),
    st.sampled_from(["no", "without", "never", "zero"]),
    st.sampled_from(["retry", "retries", "backoff", "cache"]),
    st.sampled_from(_vocabulary().negation_breaks),
)
def test_a_negation_before_a_break_does_not_deny_the_state_after_it(
    word: str, negation: str, noun: str, brk: str
) -> None:
    """ "order 123 had no retry and failed": the negation denies the retry, not the failure, which
    its line (the request handled) does not state (was: denied, nothing to judge, confirmed)."""
    assume(brk.isascii())
    outcome, reason = _outcome(f"order 123 had {negation} {noun} {brk} {word} at 10:01")
    assert outcome == "warn" and reason.startswith("unstated"), reason


@given(st.sampled_from([w for name, w in _words("state") if not w.isascii()]), st.sampled_from(["没有", "未", "无"]))
def test_a_chinese_negation_before_a_break_does_not_deny_the_state_after_it(word: str, negation: str) -> None:
    brk = next(b for b in _vocabulary().negation_breaks if not b.isascii())
    outcome, reason = _outcome(f"订单123{negation}重试{brk}{word} 10:01")
    assert outcome == "warn" and reason.startswith("unstated"), reason


def _series(service: str, values: list[int]) -> str:
    lines = [f"2026-07-07T10:{minute:02d}:00Z {value}ms" for minute, value in enumerate(values)]
    return f"query_metrics service={service} metric=latency_p99_ms\n" + "\n".join(lines)


@given(
    st.lists(st.integers(2, 400), min_size=4, max_size=12, unique=True),
    st.sampled_from(_STEADY_WORDS),
    st.sampled_from(["dip", "plateau", "other output"]),
    st.data(),
)
def test_a_steady_course_is_its_own_series_moving_at_every_point(
    values: list[int], word: str, shape: str, data: st.DataObject
) -> None:
    """The series holding the quoted points must move at each point between them: another cited
    output's rising series (quoted for a middle point), or a level held then left in one jump
    ("12, 12, 12, 390"), states no steady rise of this one (both were confirmed)."""
    rising = sorted(values)
    api = list(rising)
    at = data.draw(st.integers(1, len(api) - 2))
    api[at] = api[at - 1] if shape == "plateau" else api[at - 1] - 1
    other = [value + 1 for value in rising]
    outputs = {394: _series("api", api), 395: _series("db", other)}
    lines = outputs[394].splitlines()
    bindings = [binding([394], lines[1]), binding([394], lines[-1])]
    if shape == "other output":
        bindings.append(binding([395], outputs[395].splitlines()[1 + at]))
    text = f"api latency rose {word} from {api[0]}ms at 10:00 to {api[-1]}ms at 10:{len(api) - 1:02d}"
    store = InMemoryInvocations([invocation(i, output=output) for i, output in outputs.items()])
    report = _GATEKEEPER.validate(v2([claim(text=text, bindings=bindings)]), session_id=SESSION, invocations=store)
    (check,) = [c for t in report.claim_traces for c in t.checks if c.rule_id == "claim.stated_content"]
    assert check.outcome == "warn" and word in check.reason, (api, shape, check.reason)


@given(
    st.integers(0, 22 * 60),
    st.integers(1, 50),
    st.integers(1, 120),
    st.sampled_from([None, 26, 71]),
    st.sampled_from(["all", "every one of them", "都"]),
)
def test_all_within_two_clocks_is_of_the_template_the_claim_counts(
    first: int, length: int, longer: int, count_named: int | None, word: str
) -> None:
    """Two quoted templates: the clocks holding one's span state *all* of the other's lines
    nothing ("the proxy opens all happened between 05:05 and 05:12" was confirmed by the 26
    failures' span while the 71 opens run longer); a count the claim names says which — and the
    71 counted, all of them between those clocks is still not what their span says."""

    def clock(minute: int) -> str:
        return f"{minute // 60:02d}:{minute % 60:02d}"

    def template(count: int, start: int, end: int, text: str) -> str:
        return f"  {count}× INFO 2017-07-27T{clock(start)}:50Z – 2017-07-27T{clock(end)}:56Z {text}"

    short = template(26, first, first + length, "<*> error : Could not connect to proxy <*>")
    long = template(71, first, min(first + length + longer, 23 * 60 + 59), "<*> open through proxy <*>")
    output = f"matched 97 lines (INFO 97)\ntemplates:\n{short}\n{long}"
    named = f" {count_named}" if count_named else ""  # in the clause of the absolute: its count
    text = f"the{named} proxy connections {word} between {clock(first)} and {clock(first + length)}"
    store = InMemoryInvocations([invocation(394, output=output)])
    bindings = [binding([394], short.strip()), binding([394], long.strip())]
    report = _GATEKEEPER.validate(v2([claim(text=text, bindings=bindings)]), session_id=SESSION, invocations=store)
    (check,) = [c for t in report.claim_traces for c in t.checks if c.rule_id == "claim.stated_content"]
    if count_named == 26:
        assert check.outcome == "pass", (text, check.reason)
    else:  # no count: which lines unsaid; the 71's: they run past the second clock
        assert check.outcome == "warn" and "(all)" in check.reason, (text, check.reason)


@given(
    st.integers(23 * 60, 23 * 60 + 59),
    st.integers(0, 59),
    st.lists(st.integers(2, 400), min_size=2, max_size=2, unique=True),
    st.sampled_from(["rose", "climbed", "上升", "fell", "dropped", "下降"]),
    st.booleans(),
)
def test_a_direction_across_midnight_is_read_in_time_order(
    late: int, early: int, values: list[int], word: str, claim_order: bool
) -> None:
    """ "84ms at 23:59, 31ms at 00:01 the next day" is a fall: a point's date orders it before its
    clock (was: 00:01 read as earlier, a false rise confirmed and the true fall contradicted)."""
    before, after = values
    lines = [
        f"2026-07-07T{late // 60:02d}:{late % 60:02d}:00Z {before}ms",
        f"2026-07-08T00:{early:02d}:00Z {after}ms",
    ]
    output = "query_metrics service=api metric=latency_p99_ms\n" + "\n".join(lines)
    shown = [f"{before}ms", f"{after}ms"] if claim_order else [f"{after}ms", f"{before}ms"]
    outcome, reason = _outcome(f"api latency {word}: {shown[0]} and {shown[1]}", output, "\n".join(lines))
    up = word in ("rose", "climbed", "上升")
    if up == (after > before):
        assert outcome == "pass", (lines, word, reason)
    else:
        assert outcome == "fail" and reason.startswith("contradicts"), (lines, word, reason)


@given(
    st.sampled_from(["no doubt", "no retries", "without the cache", "none cached"]),
    st.sampled_from([": ", "：", " and then "]),
    st.sampled_from([w for name, w in _words("absolute") if name == "always" and w.isascii()]),
)
def test_a_negation_before_a_colon_leaves_the_absolute_after_it_to_be_judged(
    opening: str, mark: str, word: str
) -> None:
    """ "no doubt: api p99 was always above 5 ms" claims *always*; a series under 5 ms then crosses
    its bound (was: the negation denied 'always' to its clause's end, nothing judged, confirmed)."""
    lines = [f"2026-07-07T10:{minute:02d}:00Z {3 + minute % 2}ms" for minute in range(20)]
    output = "query_metrics service=api metric=latency_p99_ms\n" + "\n".join(lines)
    text = f"{opening}{mark}api p99 was {word} above 5 ms from 10:02 to 10:17"
    outcome, reason = _outcome(text, output, "\n".join(lines))
    assert outcome == "fail" and reason.startswith("contradicts"), (text, reason)


@given(
    st.sampled_from(_UNDENIED_WORDS),
    st.sampled_from(["{}-free", "{} free", "{}free", "non-{}", "non {}"]),
)
def test_a_concept_word_made_its_absence_states_nothing(word: str, shape: str) -> None:
    """ "error-free", "non-error responses", "timeoutless": the evidence says there were none (was:
    stated, so "payment-service had errors" citing "payment-service error-free" was confirmed)."""
    concept = next(name for name, words in _EVIDENCE_WORDS.items() if word in words)
    assume(word[-1].isalnum() and word[0].isalnum() and (word.islower() or "{}-" in shape or " " in shape))
    # glued to a phrase ("restart countfree") the suffix is its last word's, not the phrase's
    assume(" " not in word or shape != "{}free")
    line = f"ts-price-service {shape.format(word)} at 10:01 (340 requests)"
    assert not concepts().states(concept, line), line


@given(
    st.sampled_from(["no cache", "no doubt", "none cached", "没有缓存时", "no retries when"]),
    st.sampled_from(["stayed above", "remained above", "always above", "一直高于", "保持高于"]),
    st.booleans(),
)
def test_a_negation_of_something_else_before_a_held_bound_turns_no_side(opening: str, bound: str, high: bool) -> None:
    """ "api p99 with no cache stayed above 5 ms": the negation is the cache's; read as turning the
    bound ("below 5 ms") it confirmed the claim over a series under 5 ms and contradicted it over
    one above. Unsure of the side, the claim is at most an inference: never confirmed false, nor
    contradicted true."""
    lines = [f"2026-07-07T10:{minute:02d}:00Z {(8 if high else 3) + minute % 2}ms" for minute in range(20)]
    output = "query_metrics service=api metric=latency_p99_ms\n" + "\n".join(lines)
    outcome, reason = _outcome(f"api p99 with {opening} {bound} 5 ms from 10:02 to 10:17", output, "\n".join(lines))
    assert outcome != ("fail" if high else "pass"), (outcome, reason)


_LEVEL_WORDS = sorted({w for words in _EVIDENCE_WORDS.values() for w in words if w.isupper() and w.isalpha()})


_OPENING_NEGATIONS = [
    w for w in _vocabulary().absences if w.lower() not in {v.lower() for v in _vocabulary().empty_values}
]


@given(st.sampled_from(_LEVEL_WORDS), st.sampled_from(_OPENING_NEGATIONS), st.sampled_from([":", ": ", " : "]))
def test_a_log_level_opens_its_message_whose_negation_is_the_messages(word: str, negation: str, mark: str) -> None:
    """ "ERROR: no route to host" states an error (the message says what failed); "ERRORS: 0" —
    a level word holding an empty value — states none."""
    concept = next(name for name, words in _EVIDENCE_WORDS.items() if word in words)
    assert concepts().states(concept, f"payment-service {word}{mark}{negation} route to host"), word
    assert not concepts().states(concept, f"payment-service {word}{mark}0"), word


@given(
    st.integers(0, 200),
    st.integers(3, 40),
    st.integers(-30, 60),
    st.sampled_from(
        [
            "At {c}, lock waits were still climbing.",
            "At the end of the window, {c}, lock waits were still rising.",
            "{c} 时锁等待仍在上升。",
        ]
    ),
)
def test_a_direction_at_a_time_is_stated_only_by_an_episode_holding_that_time(
    start: int, length: int, offset: int, form: str
) -> None:
    """ "At 15:50 lock waits were still climbing" of a series whose rise ran 15:04–15:44: the cited
    output's "up" episode does not hold 15:50 (was confirmed); within it (or rounding its ends by
    two minutes) it is stated."""
    first, last = 14 * 60 + start, 14 * 60 + start + length
    at = last + offset
    assume(0 <= at < 24 * 60)

    def clock(minute: int) -> str:
        return f"{minute // 60:02d}:{minute % 60:02d}"

    anomaly = (
        f"anomaly 1: 2026-07-07T{clock(first)}:00Z – 2026-07-07T{clock(last)}:00Z ({length + 1} points, "
        f"{length} min) up; peak 47.85s at 2026-07-07T{clock(first + 1)}:00Z; expected 0.02s; ×2392; score 88"
    )
    window = "window: min 0.02s, max 47.85s, avg 29.01s, last 0.08s (60 points)"
    output = f"query_metrics service=mysql metric=mysql_lock_wait_p99_seconds unit=s\n{window}\n{anomaly}"
    outcome, reason = _outcome(form.format(c=clock(at)), output, window)
    if first - 2 <= at <= last + 2:
        assert "no episode" not in reason, (at, reason)
    else:
        assert outcome == "warn" and "no episode of its cited outputs holds its time" in reason, (at, reason)


@given(
    st.lists(st.integers(100, 12000), min_size=3, max_size=20),
    st.integers(1, 11),
    st.sampled_from(
        [
            ("above", "order-service p99 is still above {t} s"),
            ("above", "目前订单服务 p99 仍高于 {t} 秒"),
            ("below", "p99 is currently below {t} s"),
            ("above", "At the end of the data p99 was above {t} s"),
        ]
    ),
)
def test_a_bound_placed_at_the_end_of_the_data_is_of_the_last_point(
    values: list[int], threshold: int, form: tuple[str, str]
) -> None:
    """ "Still above 9 s" quoting a 9746 ms point from before the recovery was confirmed: a bound
    the claim places at the end of the data (still, currently, 目前, 仍 …) is checked against the
    cited series' last point."""
    side, template = form
    points = "\n".join(f"2026-07-07T15:{i:02d}:00Z {v}ms" for i, v in enumerate(values))
    output = f"query_metrics service=order-service metric=http_request_p99_ms unit=ms\npoints:\n{points}"
    keeping = [i for i, v in enumerate(values) if (v > threshold * 1000) == (side == "above")]
    assume(keeping)
    quoted = keeping[0]
    line = f"2026-07-07T15:{quoted:02d}:00Z {values[quoted]}ms"
    outcome, reason = _outcome(template.format(t=threshold), output, line)
    last = values[-1]
    if (last > threshold * 1000) == (side == "above") and last != threshold * 1000:
        assert "end of the data" not in reason, (values, reason)
    else:
        assert outcome == "fail" and "not kept at the end of the data" in reason, (values, reason)


@given(
    count=st.integers(min_value=12, max_value=400),
    others=st.integers(min_value=1, max_value=40),
    wording=st.sampled_from(
        [
            "这段时间有 {n} 条慢查询，全部是同一种语句：UPDATE t_stock SET qty=qty-1。",
            "慢查询共 {n} 条，执行的是同一种语句：UPDATE t_stock SET qty=qty-1。",
            "We saw {n} slow queries; they ran the same statement: UPDATE t_stock SET qty=qty-1.",
            "{n} slow queries in the window, every one the same UPDATE t_stock SET qty=qty-1.",
            "There were {n} slow queries, each the same statement: UPDATE t_stock SET qty=qty-1.",
        ]
    ),
)
def test_the_same_over_the_set_a_quoted_template_counts_is_stated(count: int, others: int, wording: str) -> None:
    """A claim counting a set ("180 条慢查询") and saying the same thing of each is what a quoted
    template says: stated when the template counts that set, though the query matched more lines
    (other templates); not when the claim's count is no template's."""
    span = "2026-07-07T15:00:07Z – 2026-07-07T15:44:54Z"
    template = f"{count}× WARN {span} Query_time: <*> UPDATE t_stock SET qty=qty-1 WHERE <*>"
    output = "\n".join(
        [
            "query_logs service=mysql",
            f"matched {count + others} lines (WARN {count}, INFO {others})",
            "templates:",
            f"  {template}",
            f"  {others}× INFO 2026-07-07T14:52:47Z – 2026-07-07T15:47:56Z InnoDB: page_cleaner: <*>ms intended loop",
        ]
    )
    assert _outcome(wording.format(n=count), output, template)[0] == "pass"
    assert _outcome(wording.format(n=count + others + 1), output, template)[0] != "pass"


_CALM_WINDOW = (
    "window: min 31.2%, max 38.9%, avg 35.1%, last 33.0% (20 points); peak 38.9% at 2026-07-07T10:08:00Z\n"
    "anomalies: none in the window against the series' own history"
)


@given(
    form=st.sampled_from(
        [
            "CPU stayed normal the whole time.",
            "CPU 一直正常。",
            "Redis was healthy throughout.",
            "CPU 始终平稳，无异常。",
        ]
    )
)
def test_always_calm_is_stated_by_a_window_without_anomalies(form: str) -> None:
    """ "Normal the whole time" is what an output saying its whole window has no anomaly says; the
    same words over a window with one are not."""
    assert _outcome(form, _CALM_WINDOW, _CALM_WINDOW)[0] == "pass"
    busy = _CALM_WINDOW.replace("anomalies: none in the window against the series' own history", "anomaly 1: up")
    assert _beyond(_outcome(form, busy, busy)[1])


@given(
    level=st.integers(60, 100),
    form=st.sampled_from(["CPU 一直处在 {v}% 左右。", "CPU was at about {v}% the whole time."]),
)
def test_always_at_a_level_is_no_count(level: int, form: str) -> None:
    """ "一直处在 100% 左右" speaks of every point of the period, not of 100% of something: a
    percentage in its clause does not state its *always*."""
    line = f"window: min 36.03%, max {level}.4%, avg 71.81%"
    assert _outcome(form.format(v=level), line, line)[1].startswith("absolute")


@given(clock=st.sampled_from(["01:02:35", "凌晨 3 点", "20:45"]))
def test_until_is_no_always(clock: str) -> None:
    """ "一直到 01:02:35", "一直持续到 …": how far something lasted, not that it always held."""
    line = "144× INFO 2017-12-23T22:16:00Z – 2017-12-24T01:02:35Z processHandleBroadcastAction TIME_TICK"
    for form in ("TIME_TICK 广播有 144 次，一直持续到 {c}。", "解析错误一直到 {c}。"):
        assert "always" not in _outcome(form.format(c=clock), line, line)[1]


@given(
    word=st.sampled_from(_words("absolute") + _words("state") + _words("evaluative")),
    contrast=st.sampled_from(["rather than", "instead of", "as opposed to", "而不是", "而非"]),
)
def test_a_contrast_sets_aside_what_follows_it(word: tuple[str, str], contrast: str) -> None:
    """ "An outlier rather than a sign that the whole service slowed down": what follows a contrast
    to its clause's end is not claimed (an absolute too), and what comes before it still is."""
    concept, spelled = word
    claimed = [hit.concept for hit in concepts().in_claim(f"an isolated outlier {contrast} {spelled} change")]
    assert concept not in claimed, (spelled, claimed)
    before = [hit.concept for hit in concepts().in_claim(f"{spelled} change {contrast} an isolated outlier")]
    assert concept in before, (spelled, before)


@given(
    callers=st.lists(
        st.sampled_from(["ts-basic-service", "ts-travel-service", "ts-route-service"]),
        min_size=1,
        max_size=3,
        unique=True,
    ),
    form=st.sampled_from(
        ["Every call into ts-price-service came from {c}.", "所有调用 ts-price-service 的请求都来自 {c}。"]
    ),
)
def test_all_is_stated_by_the_sole_item_of_a_list(callers: list[str], form: str) -> None:
    """The one line under a heading is every member of its list: "every call into X came from Y"
    quoting the only call line; with two call lines, not."""
    rows = [
        f"call {c} → ts-price-service: {70 + i} calls, errors not stated in the window" for i, c in enumerate(callers)
    ]
    output = "\n".join(
        ["calls (caller → callee) in the window and in the baseline:", *rows, "slowest traces of ts-price-service:"]
    )
    outcome, reason = _outcome(form.format(c=callers[0]), output, rows[0])
    if len(callers) == 1:
        assert outcome == "pass", reason
    else:
        assert reason.startswith("absolute"), reason


@given(
    key=st.from_regex(r"[a-z]{3,8}(?:[A-Z][a-z]{2,6}|_[a-z]{2,6})", fullmatch=True),
    value=st.integers(0, 5000),
    other=st.integers(1, 50),
    line_form=st.sampled_from(["stepSyncOrNot {k} is {v}", "{k}={v} status=ok", "{k}: {v}"]),
    claim_form=st.sampled_from(["The check reported {k} = {v}.", "日志里 {k} 为 {v}。", "{k} was {v} then"]),
)
def test_a_fields_value_is_the_one_its_quoted_line_gives(
    key: str, value: int, other: int, line_form: str, claim_form: str
) -> None:
    """ "appSynTimes = 1" quoting "appSynTimes is 0": a claim gives a field its quoted line gives
    another value — a contradiction; the line's own value is stated."""
    line = line_form.format(k=key, v=value)
    assert not _outcome(claim_form.format(k=key, v=value), line, line)[1].startswith("contradicts")
    outcome, reason = _outcome(claim_form.format(k=key, v=value + other), line, line)
    assert outcome == "fail" and reason.startswith("contradicts") and key.lower() in reason, reason


@given(
    key=st.sampled_from(["ambient", "temp", "load", "retries", "Ambient"]),
    value=st.integers(0, 500),
    other=st.integers(1, 50),
    claim_form=st.sampled_from(
        ["本月第一条读数来自 node-117，{k}={v}。", "The first reading was {k}={v} on node-117."]
    ),
)
@example(key="ambient", value=30, other=-2, claim_form="本月第一条读数来自 node-117，{k}={v}。")
def test_a_plain_word_glued_to_equals_is_a_field(key: str, value: int, other: int, claim_form: str) -> None:
    """ "ambient=28" quoting "node-117 node temperature 1128146611 1 ambient=30": a name glued to "=" is
    written as code writes it, so its value is its quoted line's (blind8 gave 28, the next line's)."""
    line = f"91359 node-117 node temperature 1128146611 1 {key}={value}"
    assert not _outcome(claim_form.format(k=key, v=value), line, line)[1].startswith("contradicts")
    assume(value + other >= 0)
    outcome, reason = _outcome(claim_form.format(k=key, v=value + other), line, line)
    assert outcome == "fail" and reason.startswith("contradicts") and key.lower() in reason, reason


@given(
    first=st.integers(0, 23 * 60 - 30),
    gap=st.integers(1, 300),
    form=st.sampled_from(
        [
            ("{a} slowed down after {b} started timing out at {tb}.", True),
            ("{a} started timing out before {b} slowed down at {tb}.", False),
            ("{a} 的延迟上升发生在 {b} 在 {tb} 开始超时之后。", True),
            ("{a} 在 {b} 于 {tb} 报错之前就已经变慢。", False),
        ]
    ),
    swap=st.booleans(),
)
# 00:30 is the gateway's onset and where inventory's episode ends: the service named ties it
@example(first=0, gap=30, form=("{a} slowed down after {b} started timing out at {tb}.", True), swap=True)
def test_two_quoted_events_are_in_the_order_the_claim_gives(
    first: int, gap: int, form: tuple[str, bool], swap: bool
) -> None:
    """ "A slowed down after B started timing out at 08:11", each event a quoted episode of its own
    service's call: the claim's order must be the episodes' onsets', or it contradicts them."""
    text_form, later = form
    early, late = first, min(first + gap, 23 * 60 + 59)
    a_at, b_at = (late, early) if later != swap else (early, late)  # swap: the order the claim gets wrong

    def stamp(minute: int) -> str:
        return f"2026-07-07T{minute // 60:02d}:{minute % 60:02d}:00Z"

    def line(minute: int) -> str:
        return f"anomaly 1: {stamp(minute)} – {stamp(min(minute + 30, 23 * 60 + 59))} (31 points, 30 min) up"

    a_line, b_line = line(a_at), line(b_at)
    store = InMemoryInvocations(
        [
            invocation(401, "query_metrics", a_line, arguments={"service": "inventory-service"}),
            invocation(402, "query_metrics", b_line, arguments={"service": "gateway"}),
        ]
    )
    text = text_form.format(a="inventory-service", b="gateway", tb=f"{b_at // 60:02d}:{b_at % 60:02d}")
    report = _GATEKEEPER.validate(
        v2(
            [
                claim(
                    text=text,
                    bindings=[binding([401], a_line, "query_metrics"), binding([402], b_line, "query_metrics")],
                )
            ]
        ),
        session_id=SESSION,
        invocations=store,
    )
    reasons = [c.reason for t in report.claim_traces for c in t.checks if c.rule_id == "claim.stated_content"]
    ordered = any("orders" in r and r.startswith("contradicts") for r in reasons)
    assert ordered is swap, (text, a_line, b_line, reasons)


@given(
    low=st.integers(1, 40),
    gap=st.integers(1, 40),
    form=st.sampled_from(
        [
            "The second-highest reading was {low} ms.",
            "次高值是 {low} ms。",
            "The lowest reading was {d} ms below the peak.",
            "It sat {d} ms under the peak.",
        ]
    ),
)
def test_a_rank_or_a_difference_is_no_statistic(low: int, gap: int, form: str) -> None:
    """ "The second-highest reading, 4 ms", "0.81 ms below the peak": neither number is the max, so
    a line labelling it min is no contradiction; "the peak was 4 ms" still is."""
    line = f"window: min {low} ms, max {low + gap + 0.5} ms, avg {low + 1} ms"
    _, reason = _outcome(form.format(low=low, d=low), line, line)
    assert "not its max" not in reason, reason
    _, reason = _outcome(f"The peak was {low} ms.", line, line)
    assert "not its max" in reason, reason


@given(
    n=st.integers(1, 600),
    unit=st.sampled_from(["min", "MIN", "Min"]),
    blank=st.sampled_from(["", " "]),
    lead=st.sampled_from(["168 requests per ", "every ", "", "约 "]),
)
def test_a_statistic_word_that_is_a_unit_after_a_number_names_no_statistic(
    n: int, unit: str, blank: str, lead: str
) -> None:
    """ "168 requests per 5 min is 0.56 req/s": "min" right after a number is minutes, not the minimum
    (blind4's rate was read as a minimum no line labels); "min 5" and "the min was 5" still are."""
    assert "min" not in statistics().named(f"{lead}{n}{blank}{unit} is 0.56 req/s")
    assert "min" in statistics().named(f"{unit} {n}")
    assert "min" in statistics().named(f"the {unit} was {n}")


@given(
    values=st.lists(st.integers(5, 900), min_size=2, max_size=9, unique=True),
    pick=st.integers(0, 8),
    form=st.sampled_from(
        [
            ("The slowest was instance {id}, at {v} s.", 1),
            ("最慢的是实例 {id}，用了 {v} 秒。", 1),
            ("The longest one took {v} seconds (instance {id}).", 1),
            ("The fastest was instance {id}, at {v} s.", -1),
            ("最快的是 {id}，{v} 秒。", -1),
        ]
    ),
)
def test_a_number_named_the_slowest_is_no_less_than_any_line_of_its_kind(
    values: list[int], pick: int, form: tuple[str, int]
) -> None:
    """ "The slowest was instance 17288ea8…, at 0.57 s" quoting one "Took 0.57 seconds to deallocate
    network" line of several: another line of that kind at 0.58 s contradicts it (blind12 let it
    through); the true slowest (fastest) is no contradiction."""
    template, side = form
    rows = [
        f"2017-05-16 00:14:{i:02d}.161 2931 INFO nova.compute.manager [instance: {i:04x}a8-cbf4] "
        f"Took {v / 100:.2f} seconds to deallocate network for instance."
        for i, v in enumerate(values)
    ]
    output = "matched {n} lines (INFO {n})\nlines:\n{rows}".format(n=len(rows), rows="\n".join(rows))
    at = pick % len(values)
    text = template.format(id=f"{at:04x}a8", v=f"{values[at] / 100:.2f}")
    extreme = values[at] == (max(values) if side > 0 else min(values))
    outcome, reason = _outcome(text, output, rows[at])
    assert (outcome == "fail" and "is no extreme" in reason) is not extreme, (text, values, reason)


@given(
    query=st.integers(100, 600),
    lock=st.integers(1, 99),
    named=st.sampled_from(
        [
            ("lock", "光等锁就等了 {v} s。"),
            ("lock", "The lock wait alone was {v} s."),
            ("lock", "Lock_time 为 {v} s。"),
            ("query", "这条查询总共执行了 {v} s。"),
            ("query", "The query itself ran for {v} s."),
        ]
    ),
)
def test_a_value_given_by_one_fields_words_is_that_fields(query: int, lock: int, named: tuple[str, str]) -> None:
    """ "光等锁就等了 47.1 s" quoting "Query_time: 47.1 Lock_time: 24.5" (blind12): a number the claim
    gives by the words of one field of its line (a part of its name, or its Chinese word in
    ``comparisons.yaml``) that another field holds is that other field's — a contradiction; the
    named field's own value is none."""
    queried, locked = f"{query / 10:.1f}", f"{lock / 10:.1f}"
    line = f"Query_time: {queried} Lock_time: {locked} Rows_examined: 184302 UPDATE t_stock SET qty=qty-1"
    field, form = named
    right, wrong = (locked, queried) if field == "lock" else (queried, locked)
    _, reason = _outcome("SKU-49648 那条 UPDATE " + form.format(v=right), line, line)
    assert "its line's" not in reason, reason
    outcome, reason = _outcome("SKU-49648 那条 UPDATE " + form.format(v=wrong), line, line)
    # (a field the claim writes as code, "Lock_time 为 …", is also a field value of its own)
    assert outcome == "fail" and ("its line's" in reason or "in its quoted lines" in reason), reason


_FIELD_PAIRS = [("Lock_time", "Query_time"), ("rows_sent", "rows_examined"), ("queued", "deadline")]


@given(
    pair=st.sampled_from(_FIELD_PAIRS),
    values=st.lists(st.tuples(st.integers(1, 400), st.integers(1, 400)), min_size=2, max_size=8),
    form=st.sampled_from(
        [
            ("在每一条慢查询里 {a} 都{word} {b}。", ["小于", "低于"], ["大于", "高于", "超过"]),
            ("Every line has {a} {word} {b}.", ["below", "less than", "lower than"], ["above", "more than", "over"]),
            ("{a} was always {word} {b} on every line.", ["under", "below"], ["higher than", "greater than"]),
        ]
    ),
    below=st.booleans(),
)
def test_two_fields_a_claim_compares_over_every_line_are_checked_on_each(
    pair: tuple[str, str], values: list[tuple[int, int]], form: tuple[str, list[str], list[str]], below: bool
) -> None:
    """ "在每一条慢查询里 Lock_time 都小于 Query_time" names two fields and no number: checked on every
    listed line writing both (blind12 let it through, one line having Lock_time 22.5 and
    Query_time 20.1); a line against it contradicts it, none leaves it unrefuted."""
    (a, b), (template, lows, highs) = pair, form
    rows = [
        f"2026-07-07T15:00:{i:02d}Z WARN mysql [Slow query] {a}: {x} {b}: {y} Rows: 9"
        for i, (x, y) in enumerate(values)
    ]
    output = "matched {n} lines (WARN {n})\nlines:\n{rows}".format(n=len(rows), rows="\n".join(rows))
    text = template.format(a=a, b=b, word=(lows if below else highs)[len(values) % len(lows if below else highs)])
    against = any((x >= y) if below else (x <= y) for x, y in values)
    outcome, reason = _outcome(text, output, rows[0])
    assert (outcome == "fail" and "on a line it speaks of" in reason) is against, (text, values, reason)


@given(
    word=st.sampled_from(["twelve", "three", "five", "twenty"]),
    noun=st.sampled_from(["points", "hosts", "services", "lines"]),
    absolute=st.sampled_from(["all", "every one of the"]),
)
def test_an_absolute_over_a_set_counted_in_words_is_the_count(word: str, noun: str, absolute: str) -> None:
    """ "All twelve points read 0 ms": the count written as a word bounds the absolute as a digit
    does; "all of it" with no count is still unstated."""
    line = "2026-07-07T18:00:00Z 0 ms"
    assert not _beyond(_outcome(f"{absolute} {word} {noun} read 0 ms", line, line)[1])
    assert _outcome(f"{absolute} of it read 0 ms", line, line)[1].startswith("absolute")


@given(
    st.integers(60, 20 * 60),
    st.sampled_from([(30, "half an hour"), (30, "half hour"), (30, "30 minutes"), (15, "15 minutes"), (60, "hour")]),
    st.integers(3, 5),
    st.sampled_from(["They came roughly every {d} — the restarts it counted.", "The pod restarted every {d} or so."]),
    st.integers(2, 9),
)
def test_every_interval_is_computed_from_the_quoted_events(
    first: int, interval: tuple[int, str], events: int, form: str, skew: int
) -> None:
    """ "They came roughly every half hour" of restarts quoted at 12:01, 12:31 and 13:00: an
    *every* over the intervals between the quoted events, each that long — not an absolute
    its lines do not state. Unequal intervals leave it unstated."""
    minutes, said = interval

    def line(gaps: list[int]) -> str:
        at = [first + sum(gaps[:i]) for i in range(len(gaps) + 1)]
        return ", ".join(f"+1 at 2026-07-07T{m // 60:02d}:{m % 60:02d}:00Z" for m in at)

    even = line([minutes] * (events - 1))
    text = form.format(d=said)
    assert "'every'" not in _outcome(text, f"increases per 1m: {even}", even)[1]
    uneven = line([minutes] * (events - 2) + [minutes * 2 + skew])
    assert "'every'" in _outcome(text, f"increases per 1m: {uneven}", uneven)[1]


@given(
    st.integers(10, 40),
    st.integers(5, 60),
    st.integers(0, 90),
    st.sampled_from(
        [
            ("发送量在北京时间 {h8}:{mm} 已经恢复到正常水平", 8),
            ("By {hh}:{mm} UTC the send rate was back to normal.", 0),
            ("{hh}:{mm} 时已经恢复正常", 0),
            # the clock is the onset's, in a clause of its own: the recovery says no time
            ("发送量在同一分钟（{hh}:{mm} UTC）同时异常、又几乎同时恢复", None),
            ("It dipped at {hh}:{mm} UTC, and later came back to normal.", None),
        ]
    ),
)
def test_a_recovery_inside_an_anomaly_episode_is_contradicted(
    onset: int, length: int, at: int, form: tuple[str, int | None]
) -> None:
    """ "发送量在北京时间 20:38 已经恢复到正常水平" while the cited series' anomaly runs 12:10–12:39Z:
    still abnormal then. At or after the episode's last point, or before its onset, nothing to say."""
    end = onset + length
    line = (
        f"anomaly 1: 2026-07-07T12:{onset:02d}:00Z – 2026-07-07T{12 + end // 60:02d}:{end % 60:02d}:00Z "
        f"({length + 1} points, {length} min) down; peak 3 times at 2026-07-07T12:{onset:02d}:00Z; expected 50 times"
    )
    output = f"query_metrics service=notification-service metric=sms_sent_per_minute\n{line}"
    minute = 12 * 60 + at
    words, offset = form
    text = words.format(hh=f"{minute // 60:02d}", h8=f"{minute // 60 + (offset or 0):02d}", mm=f"{minute % 60:02d}")
    _, reason = _outcome(text, output, line)
    inside = 12 * 60 + onset <= minute < 12 * 60 + end and offset is not None
    assert ("recovered within anomaly" in reason) is inside, (text, reason)


@example(hundredths=1, minute=0, shift=-1, form=("The {v} peak came at {t}.", 0))  # 23:59 is a minute off 00:00
@given(
    st.integers(1, 9999),
    st.integers(0, 22 * 60),
    st.integers(-90, 90),
    st.sampled_from(
        [("The {v} peak came at {t}.", 0), ("峰值 {v} 出现在 {t}", 0), ("the peak of {v} was at {t} Beijing time", 8)]
    ),
)
def test_a_peak_at_a_clock_is_at_the_time_its_output_gives_it(
    hundredths: int, minute: int, shift: int, form: tuple[str, int]
) -> None:
    """ "The 50.89 peak came at 11:30" where the line says "…(4 points, 30 min) up; peak 50.89 at
    11:35": the onset's clock is on the line, the peak's is another. In the zone it names, too."""
    words, offset = form
    value = Decimal(hundredths) / 100
    peak = f"2014-07-15T{minute // 60:02d}:{minute % 60:02d}:00Z"
    line = f"anomaly 2: 2014-07-15T{minute // 60:02d}:00:00Z – {peak} (4 points, 30 min) up; peak {value} at {peak}"
    said = (minute + shift + offset * 60) % (24 * 60)
    text = words.format(v=value, t=f"{said // 60:02d}:{said % 60:02d}")
    _, reason = _outcome(text, f"query_metrics service=rogue metric=key\n{line}", line)
    assert ("the peak" in reason and "cited output" in reason) is (abs(shift) > 1), (text, reason)


@given(
    count=st.integers(min_value=2, max_value=40),
    case=st.sampled_from(["same", "one other", "cut short"]),
    wording=st.sampled_from(
        [
            "其中 {n} 条是 Unknown base file，指向同一个 base 文件 {stub}…。",
            "The {n} Unknown base file warnings all name the same file, {stub}…",
            "{n} 条 Unknown base file 都指向同一个文件 {stub}…",
        ]
    ),
    twice=st.booleans(),
)
def test_the_same_value_in_every_listed_instance_of_a_counted_template_is_stated(
    count: int, case: str, wording: str, twice: bool
) -> None:
    """What a template varies on (``<*>``) is the same in each of its lines when every one of them
    the output lists names it, all as many as the template counts; not when one names another
    value or the listing stops short. A call cited by two excerpts lists its lines once."""
    file, other = "a489c868f0c37da93b76227c91bb03908ac0e742", "0b5e7f1d2c3a4b5c6d7e8f9012345678abcdef01"
    span = "2017-05-16T00:00:20Z – 2017-05-16T00:14:15Z"
    template = f"{count}× WARN {span} Unknown base file: /var/lib/nova/instances/_base/<*>"
    names = [file] * count
    if case == "one other":
        names[-1] = other
    rows = [
        f"2017-05-16 00:{i % 60:02d}:20.345 2931 WARNING imagecache Unknown base file: /var/lib/nova/instances/_base/"
        + n
        for i, n in enumerate(names)
    ]
    if case == "cut short":
        rows = rows[:-1]
    sync = "2017-05-16 00:09:41.850 2931 WARNING compute.manager While synchronizing instance power states"
    output = "\n".join(
        [
            "query_logs service=openstack level=WARN",
            f"matched {count + 1} lines (WARN {count + 1})",
            "templates:",
            f"  {template}",
            f"  1× WARN {span} While synchronizing instance power states",
            "lines:",
            sync,
            *rows,
        ]
    )
    excerpts = [template, rows[0].split("WARNING imagecache ", 1)[1]] if twice else [template]
    store = InMemoryInvocations([invocation(394, output=output)])
    text = wording.format(n=count, stub=file[:8])
    report = _GATEKEEPER.validate(
        v2([claim(text=text, bindings=[binding([394], e) for e in excerpts])]), session_id=SESSION, invocations=store
    )
    (check,) = [c for t in report.claim_traces for c in t.checks if c.rule_id == "claim.stated_content"]
    assert (check.outcome == "pass") is (case == "same"), (case, text, check.reason)


@given(
    values=st.lists(st.integers(min_value=10000, max_value=9999999), min_size=2, max_size=5, unique=True),
    quoted=st.integers(min_value=1, max_value=5),
    wording=st.sampled_from(
        [
            "{n} 台节点的优先级 pri 都是 {v}。",
            "All {n} deferred messages had pri {v}.",
            "{n} 批都是 pri={v}。",
        ]
    ),
    share=st.booleans(),
)
def test_a_value_one_line_gives_is_not_what_every_member_counted_shares(
    values: list[int], quoted: int, wording: str, share: bool
) -> None:
    """ "五台节点的 pri 都是 1624553" quoting one line whose pri that is: a count before an *all* does
    not state a value each member shares; the lines it quotes, each naming it, do."""
    hosts = [f"{chr(97 + i)}admin1" for i in range(len(values))]
    pris = [values[0]] * len(values) if share else values
    rows = [
        f"{h} sendmail[{4300 + i}]: to=root, mailer=relay, pri={p}, stat=Deferred"
        for i, (h, p) in enumerate(zip(hosts, pris, strict=True))
    ]
    output = (
        f"query_logs service=thunderbird query=Deferred\nmatched {len(rows)} lines (INFO {len(rows)})\nlines:\n"
        + "\n".join(rows)
    )
    excerpts = rows[: min(quoted, len(rows))]
    text = wording.format(n=len(rows), v=values[0])
    store = InMemoryInvocations([invocation(394, output=output)])
    report = _GATEKEEPER.validate(
        v2([claim(text=text, bindings=[binding([394], e) for e in excerpts])]), session_id=SESSION, invocations=store
    )
    (check,) = [c for t in report.claim_traces for c in t.checks if c.rule_id == "claim.stated_content"]
    # stated when every listed line names it (every member shown), or every quoted member does
    stated = share
    assert (check.outcome == "pass") is stated, (share, quoted, text, check.reason)


@given(hour=st.integers(1, 11), day=st.sampled_from([7, 8]), ampm=st.sampled_from(["p.m.", "pm", " PM", "p.m"]))
def test_a_recovery_on_a_day_the_claim_writes_is_judged_on_that_day(hour: int, day: int, ampm: str) -> None:
    """ "It recovered on 31 March, reaching 71.57 °F at 2 p.m. EDT" was contradicted by an episode
    of 29 March at that hour: a day written apart from the clock is the clock's day."""
    start, end = 12 + hour - 1, 12 + hour + 1
    line = (
        f"anomaly 1: 2026-07-07T{start:02d}:00:00Z – 2026-07-07T{end:02d}:00:00Z (3 points, 2 h) down; "
        f"peak 3 times at 2026-07-07T{start:02d}:00:00Z; expected 50 times"
    )
    output = f"query_metrics service=notification-service metric=sms_sent\n{line}"
    text = f"The send rate recovered on {day} July, back to normal at {hour}{ampm} UTC."
    _, reason = _outcome(text, output, line)
    assert ("recovered within anomaly" in reason) is (day == 7), (text, reason)


@given(
    low=st.integers(100, 900),
    factor=st.integers(8, 90),
    said=st.integers(2, 6),
    form=st.sampled_from(
        [
            "p99 went from {a} ms to {b} ms, roughly {w} times higher.",
            "p99 从 {a} ms 涨到 {b} ms，大约是 {w} 倍。",
        ]
    ),
)
def test_a_ratio_between_two_values_of_the_claims_own_is_theirs(low: int, factor: int, said: int, form: str) -> None:
    """ "from 192.5 ms to 9.8 s, roughly five times higher" quoting a series with many values: some
    cited value is about five times one of the claim's, but the claim's ratio is of its own two."""
    high = low * factor
    points = "\n".join(f"2026-07-07T10:{m:02d}:00Z {v} ms" for m, v in enumerate([low, low * said, high, low * 2]))
    output = f"query_metrics service=order-service metric=p99\npoints:\n{points}"
    words = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}
    wrong = form.format(a=low, b=high, w=words[said] if form.startswith("p99 went") else said)
    _, reason = _outcome(wrong, output, points)
    assert "the ratio" in reason and "stated by no tool" in reason, (wrong, reason)
    right = form.format(a=low, b=high, w=factor)
    _, reason = _outcome(right, output, points)
    assert "the ratio" not in reason, (right, reason)


@given(
    value=st.integers(1, 9999),
    compare=st.sampled_from(["比", "比 ", "与", "和", "跟", "较"]),
    reference=st.sampled_from(["期望", "期望值", "平时"]),
)
def test_a_reference_value_compared_with_is_no_percent_ratio(value: int, compare: str, reference: str) -> None:
    """ "峰值比期望的 46.17% 高出约 15.9 个百分点": the expected value itself, read as "46.17% of
    expected", made a true claim an unstated ratio."""
    from veridiag.text.concepts import concepts

    percent = f"{value / 100:.2f}%"
    assert not concepts().percent_ratios(f"峰值{compare}{reference}的 {percent} 高出约 15.9 个百分点")
    stated = concepts().percent_ratios(f"最低点只有{reference}的 {percent}")
    assert stated == [] or stated[0][1] == Decimal(value) / 10000


@given(
    values=st.lists(st.integers(18, 40), min_size=2, max_size=30),
    bound=st.integers(20, 38),
    form=st.sampled_from(
        [
            "整个 10 月每个节点的 ambient 都没有超过 {t}。",
            "Every node's ambient never exceeded {t}.",
            "每个节点的 ambient 一直不超过 {t}",
        ]
    ),
    cut=st.booleans(),
)
def test_a_bound_over_a_quoted_pattern_is_checked_on_each_of_its_lines(
    values: list[int], bound: int, form: str, cut: bool
) -> None:
    """ "整个 10 月每个节点的 ambient 都没有超过 30" quoting "34× … ambient=<*>": node-109 read 31 on a
    line the output lists. One listed line over the bound contradicts it, the listing whole or cut
    short; a line left out decides nothing."""
    rows = [f"{9135 + i} node-{100 + i} node temperature 11281466{i:02d} 1 ambient={v}" for i, v in enumerate(values)]
    template = f"{len(values)}× INFO 2005-10-01T06:03:31Z – 2005-10-31T18:03:31Z ambient=<*>"
    listed = rows[:-1] if cut else rows
    head = f"query_logs service=hpc query=ambient\nmatched {len(values)} lines (INFO {len(values)})"
    output = "\n".join([head, "templates:", f"  {template}", "lines:", *listed])
    _, reason = _outcome(form.format(t=bound), output, template)
    crossed = any(v > bound for v in (values[:-1] if cut else values))
    assert ("its bound is crossed" in reason) is crossed, (values, bound, cut, reason)


@given(
    address=st.tuples(*(st.integers(0, 255) for _ in range(4))).map(lambda t: ".".join(map(str, t))),
    concept=st.sampled_from(["拒绝连接", "connection refused", "超时", "timed out"]),
)
def test_a_zero_inside_a_number_is_no_negation(address: str, concept: str) -> None:
    """ "原因都是本机 127.0.0.1 拒绝连接": the 0 of the address was read as "zero" denying the refusal
    its quoted lines state. A zero count is still one ("0 次超时")."""
    from veridiag.text.concepts import concepts

    assert not concepts().denied_in_claim(f"原因都是本机 {address} {concept}。")
    assert concepts().denied_in_claim(f"窗口里 0 次{concept}")


@given(
    st.lists(st.integers(1, 90), min_size=3, max_size=12),
    st.integers(0, 11),
    st.sampled_from(
        [
            "After the drop the metric never rose above {b} again until the end of the data.",
            "掉下来之后直到数据结束，它再也没有超过 {b}。",
        ]
    ),
)
def test_never_again_quoting_an_episode_line_is_checked_from_its_start(
    tenths: list[int], spike: int, form: str
) -> None:
    """ "never rose above 1 again until the end" quoting the anomaly line "00:40Z – 11:55Z … down"
    (no point of its own): the points from the episode's start on decide it. 10.01 at 02:30Z was
    let through."""
    values = [f"{t / 100:.2f}" for t in tenths]  # all below 1
    crossed = spike % len(values)
    start = "2014-01-29T00:40:00Z"
    episode = f"anomaly 1: {start} – 2014-01-29T11:55:00Z (136 points, 11.2 h) down; peak 0.01; expected 33.45"
    before = "2014-01-29T00:10:00Z 33.47"  # the level before the drop is no point after it

    def output(points: list[str]) -> str:
        rows = [f"2014-01-29T{1 + i:02d}:30:00Z {v}" for i, v in enumerate(points)]
        return "\n".join(["query_metrics service=grok metric=cpu", episode, "points:", before, *rows])

    kept = output(values)
    assert "contradicts" not in _outcome(form.format(b=1), kept, episode)[1]
    broken = output([*values[:crossed], "10.01", *values[crossed + 1 :]])
    outcome, reason = _outcome(form.format(b=1), broken, episode)
    assert outcome == "fail" and "crossed" in reason, reason


_SERVICE = st.from_regex(r"[a-z]{2,8}(-[a-z]{2,6})?-service", fullmatch=True)


@given(
    st.tuples(_SERVICE, _SERVICE).filter(lambda pair: pair[0] != pair[1]),
    st.sampled_from(
        ["调用方向是 {a} → {b}，窗口内 7 次调用。", "Calls go {a} -> {b}, 7 in the window.", "{a} ⇒ {b} 共 7 次"]
    ),
    st.sampled_from(["call {x} → {y}: 7 calls", "trace 1 critical path: {x}:/api 0.5ms (self 0.5ms) → {y}:GET 1ms"]),
)
def test_an_arrow_the_claim_turns_against_its_quoted_line_contradicts(
    pair: tuple[str, str], form: str, line_form: str
) -> None:
    """ "调用方向是 ts-verification-code-service → ts-auth-service" quoting "call ts-auth-service →
    ts-verification-code-service: 7 calls": caller and callee swapped, confirmed."""
    caller, callee = pair
    line = line_form.format(x=caller, y=callee)
    assert "contradicts" not in _outcome(form.format(a=caller, b=callee), line, line)[1]
    outcome, reason = _outcome(form.format(a=callee, b=caller), line, line)
    assert outcome == "fail" and "its quoted lines draw" in reason, reason
    both = f"{line}\ncall {callee} → {caller}: 2 calls"  # drawn both ways: either order is theirs
    assert "its quoted lines draw" not in _outcome(form.format(a=callee, b=caller), both, both)[1]


@given(st.lists(st.sampled_from(["a", " ", "-", "→", ">", "⇒", "=", ":", "\n", "svc-service", "x1", "7"]), max_size=30))
def test_any_arrows_in_a_claim_or_its_line_are_judged_without_a_crash(parts: list[str]) -> None:
    """The first arrow-order check crashed on a chain opening with an arrow (no name before it)."""
    text = "".join(parts) or "→"
    assert "crashed" not in _outcome(text, text, text)[1]


def _scopes() -> dict[str, list[str]]:
    from veridiag.gatekeeper import load_ruleset
    from veridiag.gatekeeper.rules.stated_content import StatedParams

    rule = load_ruleset().get("claim.stated_content")
    assert rule is not None
    return rule.typed_params(StatedParams).scopes


@given(st.data(), st.sampled_from(["cpu_usage_rate", "memory_usage_bytes", "network_receive_mb"]))
def test_a_claim_naming_one_scope_of_a_series_of_another_contradicts_it(data: st.DataObject, measure: str) -> None:
    """ "The frontend pod's CPU usage rate peaked at 5.05 %" citing only ``node_cpu_usage_rate``
    gives the node's value as the pod's; naming the series' own scope, or none, does not."""
    scopes = _scopes()
    series, named = data.draw(st.sampled_from(sorted(scopes))), data.draw(st.sampled_from(sorted(scopes)))
    metric_word = data.draw(st.sampled_from([w for w in scopes[series] if w.isascii()]))
    word = data.draw(st.sampled_from(scopes[named]))
    metric = f"{metric_word}_{measure}"
    output = (
        f"query_metrics service=frontend metric={metric} start=2022-08-22T03:45:00Z\n"
        "window: min 2.07, max 5.05, avg 2.9 (20 points); peak 5.05 at 2022-08-22T03:58:19Z"
    )
    store = InMemoryInvocations([invocation(1303, "query_metrics", output, arguments={"metric": metric})])
    excerpt = "peak 5.05 at 2022-08-22T03:58:19Z"
    form = data.draw(st.sampled_from(["The frontend {w}'s usage peaked at 5.05.", "frontend 的{w}用量峰值为 5.05。"]))

    def outcome(text: str) -> set[str]:
        report = _GATEKEEPER.validate(
            v2([claim(text=text, bindings=[binding([1303], excerpt, "query_metrics")])]),
            session_id=SESSION,
            invocations=store,
        )
        return {
            c.outcome
            for t in report.claim_traces
            for c in t.checks
            if c.rule_id == "claim.stated_content" and "series it cites" in c.reason
        }

    assert (outcome(form.format(w=word)) == {"fail"}) is (named != series), (metric, word)
    assert outcome("The frontend usage peaked at 5.05.") == set()  # no scope named


@given(
    form=st.sampled_from(
        [
            "The CDN origin slowdown ({v} ms) was logged before the workers change.",
            "CDN 回源变慢（{v} ms）发生在 workers 变更之后。",
            "The {v} ms CDN warning came after the config change.",
        ]
    ),
    value=st.integers(501, 999),
    dated=st.booleans(),
)
def test_an_order_of_two_events_needs_both_dated(form: str, value: int, dated: bool) -> None:
    """ "The CDN slowdown (640 ms) was logged before the workers change" citing the CDN line alone:
    its quoted lines date one event, so the order is the claim's inference; quoting the change's
    line too dates both (``_event_order`` checks an order whose events it can tie to them)."""
    cdn = f"2026-12-01T01:15:40Z WARN thumbnailer cdn origin fetch slow: {value} ms (threshold 500 ms)"
    change = "2026-12-01T01:10:05Z INFO thumbnailer config reloaded: resize.workers 16 -> 1"
    output = f"{cdn}\n{change}" if dated else cdn
    store = InMemoryInvocations([invocation(4303, output=output)])
    bindings = [binding([4303], cdn)] + ([binding([4303], change)] if dated else [])
    report = _GATEKEEPER.validate(
        v2([claim(text=form.format(v=value), bindings=bindings)]), session_id=SESSION, invocations=store
    )
    reasons = [c.reason for t in report.claim_traces for c in t.checks if c.rule_id == "claim.stated_content"]
    undated = any("do not both date" in r for r in reasons)
    assert undated is not dated, reasons


@given(
    st.sampled_from(
        [
            "ts-price-service handled 450 spans in the window against 220 in the hour before.",
            "窗口内 p90 约 100 毫秒，之前一小时只有 2.62 毫秒。",
            "日配额设为 2000 条（之前不限量）。",
            "Less than four minutes after the screen went off, sync started.",
            "The gateway timed out after 30s.",
        ]
    )
)
def test_an_order_word_beside_a_period_or_a_previous_value_orders_no_events(text: str) -> None:
    """ "the hour before", "之前是 2gb", "four minutes after": a period, a previous value or a relative
    time, not two events the claim orders."""
    assert concepts().orders_events(text) == []


@given(
    phrase=st.sampled_from(["Unknown base file", "Removing base or swap file", "连接池耗尽", "no free leases"]),
    mark=st.sampled_from(['"{p}"', "“{p}”", "「{p}」", "`{p}`"]),
    held=st.booleans(),
)
def test_a_phrase_quoted_from_another_call_is_the_claims_inference(phrase: str, mark: str, held: bool) -> None:
    """ "The last \\"Unknown base file\\" warning was at 04:44:45" citing a search for "Active base
    files": words the claim says the evidence wrote, which the evidence it cites does not hold, make
    it at most an inference; quoted from its own call they are fine."""
    message = phrase if held else "Active base files"
    output = f"query_logs service=openstack\n  82× INFO 2017-05-16T00:00:05Z – 2017-05-16T00:14:45Z {message}: <*>"
    text = f"The last {mark.format(p=phrase)} line was logged at 00:14:45 UTC."
    _outcome_kind, reason = _outcome(text, output, "2017-05-16T00:00:05Z – 2017-05-16T00:14:45Z")
    assert ("do not hold" in reason) is not held, reason


@given(
    words=st.sampled_from([("rise", "rose"), ("climb", "climbed"), ("上升", "上升"), ("drop", "dropped")]),
    first=st.integers(2, 64),
    last=st.integers(0, 64),
)
def test_a_from_to_phrase_of_another_clause_is_no_direction_of_this_one(
    words: tuple[str, str], first: int, last: int
) -> None:
    """ "The rise coincides with deploy 4f2a9c1, which set resize.workers from 16 to 1": the from–to
    phrase is the setting's, in its own clause, not the numbers the rise runs through; in the
    direction's own clause it is ("workers rise from 1 to 16" of a drop contradicts)."""
    assume(first != last)
    word = words[0]
    line = f"2026-12-01T01:10:05Z INFO thumbnailer resize workers set to {last} (was {first})"
    text = f"The {word} coincides with deploy 4f2a9c1, which set resize.workers from {first} to {last}."
    assert _outcome(text, line, line)[0] != "fail", text
    verb = words[1]
    own = f"resize.workers {verb} from {first} to {last}."
    against = (last > first) != (word in ("rise", "climb", "上升"))
    assert (_outcome(own, line, line)[1].startswith("contradicts")) is against, own
