"""The compact chat message (issue 28): whatever the answer — many claims, long Chinese and English
texts, markup from evidence, many hypotheses and gaps — each destination's payload stays within
its limit, opens with the verdict badge and the one-line answer, lists at most five facts, ends
with the session link, and carries no live markup from evidence; the sparkline; hypotheses each
with what would confirm it, no need twice and none a confirmed fact already shows; key facts
ranked by what was asked."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token

from veridiag.config import DestinationSettings
from veridiag.contracts.answer import AnswerDocument, ClaimItem, EvidenceItem
from veridiag.contracts.delivery import AnswerReport, ReportEvidence, ReportFact, ReportHypothesis, ReportTrend
from veridiag.delivery.answer import FIRST_LINE_CHARS, confirming_needs, first_line, trend_invocation
from veridiag.delivery.compact import TARGET_BYTES
from veridiag.delivery.destination import Attempt, Destination
from veridiag.delivery.dingtalk import BODY_BYTES as DINGTALK_BODY_BYTES
from veridiag.delivery.dingtalk import DingTalk
from veridiag.delivery.feishu import BODY_BYTES as FEISHU_BODY_BYTES
from veridiag.delivery.feishu import Feishu
from veridiag.delivery.markup import mrkdwn
from veridiag.delivery.report import build_report, report_words
from veridiag.delivery.slack import MESSAGE_BLOCKS, MESSAGE_BYTES, SECTION_CHARS, Slack
from veridiag.delivery.sparkline import BARS, sparkline
from veridiag.delivery.wecom import CONTENT_BYTES, WeCom
from veridiag.pipeline.shape import MAX_KEY_FACTS
from veridiag.redaction import default_redactor

LINK = "https://veridiag.example.com/sessions/s-1?lang=zh"
BADGES = {"PASS": "PASS · ", "LOW_CONFID": "LOW_CONFID · ", "REJECT": "REJECT · "}
_PARSER = MarkdownIt("commonmark").enable(["table", "strikethrough"])
_LIVE = {"link_open", "image", "html_inline", "html_block", "code_block", "fence", "heading_open", "table_open"}

_zh = st.text(st.characters(min_codepoint=0x4E00, max_codepoint=0x9FA5), min_size=1, max_size=40)
_en = st.text(st.characters(categories=["Ll", "Lu", "Nd"]) | st.sampled_from(" -_.:%"), min_size=1, max_size=60)
_markup = st.sampled_from(
    [
        "[runbook](https://evil.example/x)",
        "![](https://evil/pixel.png)",
        "<script>alert(1)</script>",
        "<!channel>",
        "<@U024BE7LH>",
        "<https://evil|click>",
        "<at id=all></at>",
        "# heading",
        "order=<*> paid *bold* _it_",
        "`code` ~~s~~ \\[x](y)",
    ]
)
#: Long texts: Chinese, English and markup, in runs of up to a few hundred characters.
_text = st.lists(_zh | _en | _markup, min_size=1, max_size=12).map(" ".join)
_long = st.lists(_zh | _en | _markup, min_size=1, max_size=40).map(" ".join)


@st.composite
def reports(draw: st.DrawFn) -> AnswerReport:
    lang = draw(st.sampled_from(["zh", "en"]))
    count = draw(st.integers(0, 40))
    facts = [
        ReportFact(
            claim_id=f"claim-{index}",
            text=draw(_text),
            verification=draw(st.sampled_from(["direct_observation", "reasonable_inference", None])),
            evidence=[
                ReportEvidence(invocation_id=draw(st.integers(1, 999)), tool_name="query_logs", excerpt=draw(_text))
                for _ in range(draw(st.integers(0, 2)))
            ],
        )
        for index in range(count)
    ]
    shown = draw(st.permutations([f.claim_id for f in facts])) if facts else []
    values = draw(st.lists(st.floats(allow_nan=True, allow_infinity=False, width=32), min_size=0, max_size=300))
    finite = [v for v in values if math.isfinite(v)]
    return AnswerReport(
        session_id="s-1",
        question=draw(_long),
        lang=lang,
        status="completed",
        verdict=draw(st.sampled_from(["PASS", "LOW_CONFID", "REJECT"])),
        summary=draw(_long) + "\n\n" + draw(_long),
        facts=facts,
        hypotheses=[
            ReportHypothesis(text=draw(_text), needs=draw(st.lists(_text, max_size=4)))
            for _ in range(draw(st.integers(0, 12)))
        ],
        gaps=draw(st.lists(_long, max_size=15)),
        next_steps=draw(st.lists(_text, max_size=10)),
        unconfirmed=draw(st.integers(0, 30)),
        link=LINK,
        first_line=draw(_long),
        key_facts=shown[: draw(st.integers(0, MAX_KEY_FACTS))],
        trend=ReportTrend(invocation_id=7, service=draw(_en), metric=draw(_en), unit="ms", values=finite)
        if finite
        else None,
    )


def _send(destination: Destination, report: AnswerReport) -> tuple[bytes, Any]:
    target = DestinationSettings(kind=destination.id, url="https://hooks.example/x", secret="s3cret")
    body = destination.request(report, target, Attempt("d-1", 1, 1_800_000_000.0)).body
    return body, json.loads(body)


def _live(tokens: list[Token]) -> list[Token]:
    found = []
    for token in tokens:
        if token.type in _LIVE:
            found.append(token)
        found += _live(token.children or [])
    return found


def _inert(markdown: str, *, link: bool) -> None:
    live = _live(_PARSER.parse(markdown))
    assert [t.attrGet("href") for t in live if t.type == "link_open"] == ([LINK] if link else []), markdown
    assert [t.type for t in live if t.type != "link_open"] == [], markdown


def _fact_lines(text: str) -> list[str]:
    """The numbered lines (an escaped "1\\." in evidence text is no number)."""
    return [line for line in text.split("\n") if re.match(r"\d+\. ", line)]


def _first_line_shown(shown: str, first: str) -> bool:
    """``shown`` is ``first``, or its start cut with "…"."""
    return shown == first or (shown.endswith("…") and first.startswith(shown[:-1].rstrip()))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(reports())
def test_slack_stays_within_ten_blocks_and_3_kb_with_badge_first_line_facts_and_button(report: AnswerReport) -> None:
    body, payload = _send(Slack(), report)
    blocks = payload["blocks"]
    assert len(blocks) <= MESSAGE_BLOCKS and len(body) <= MESSAGE_BYTES
    badge, _space, line = blocks[0]["elements"][0]["elements"]
    assert badge["text"].startswith(("✅ ", "⚠️ ", "❌ ")) and BADGES[report.verdict or ""] in badge["text"]
    assert _first_line_shown(line["text"], mrkdwn(report.first_line) or line["text"])
    assert blocks[-1]["type"] == "actions" and blocks[-1]["elements"][0]["url"] == LINK
    texts = [e["text"] for b in blocks if b["type"] == "rich_text" for e in b["elements"][0]["elements"]]
    title = report_words()[report.lang].key_facts
    sections = [b["elements"][0]["elements"] for b in blocks[1:] if b["type"] == "rich_text"]
    facts = [spans[1]["text"] for spans in sections if spans[0]["text"] == title]
    assert len(facts) <= 1 and len(_fact_lines("".join(facts))) <= min(MAX_KEY_FACTS, len(report.facts))
    assert all(len(t) <= SECTION_CHARS for t in texts)
    for text in [
        payload["text"],
        *texts,
        *(e["text"] for b in blocks if b["type"] == "context" for e in b["elements"]),
    ]:
        assert "<" not in text and ">" not in text, text  # no mention, link or tag from evidence


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(reports())
def test_markdown_bots_stay_within_their_documented_limits_and_carry_no_live_markup(report: AnswerReport) -> None:
    feishu_body, feishu = _send(Feishu(), report)
    assert len(feishu_body) <= FEISHU_BODY_BYTES
    title = feishu["card"]["header"]["title"]["content"]
    assert title.startswith(("✅ ", "⚠️ ", "❌ ")) and BADGES[report.verdict or ""] in title
    assert "<" not in title and ">" not in title
    content = feishu["card"]["elements"][0]["content"]
    assert len(content.encode()) <= TARGET_BYTES and len(_fact_lines(content)) <= MAX_KEY_FACTS
    _inert(content, link=True)
    assert feishu["card"]["elements"][1]["actions"][0]["url"] == LINK

    dingtalk_body, dingtalk = _send(DingTalk(), report)
    text = dingtalk["markdown"]["text"]
    assert len(dingtalk_body) <= DINGTALK_BODY_BYTES and len(text.encode()) <= TARGET_BYTES
    assert dingtalk["markdown"]["title"].startswith(("✅ ", "⚠️ ", "❌ "))
    assert text.startswith("**") and BADGES[report.verdict or ""] in text.split("\n")[0]
    assert len(_fact_lines(text)) <= MAX_KEY_FACTS
    _inert(text, link=True)

    _wecom_body, wecom = _send(WeCom(), report)
    content = wecom["markdown"]["content"]
    assert len(content.encode()) <= min(CONTENT_BYTES, TARGET_BYTES) and len(_fact_lines(content)) <= MAX_KEY_FACTS
    assert BADGES[report.verdict or ""] in content.split("\n")[0]
    _inert(content, link=True)


def test_a_short_answer_is_shown_whole() -> None:
    fact = ReportFact(claim_id="c1", text="pool exhausted at 10:01", verification="direct_observation")
    report = AnswerReport(
        session_id="s-1",
        question="why?",
        lang="en",
        status="completed",
        verdict="PASS",
        summary="Time window: 10:00 – 11:00.",
        facts=[fact],
        hypotheses=[ReportHypothesis(text="slow SQL", needs=["slow log"])],
        gaps=["no database metrics"],
        next_steps=["check the pool size"],
        link=LINK,
        first_line="Most likely cause (inferred): the pool limit was lowered.",
        key_facts=["c1"],
        trend=ReportTrend(invocation_id=4, service="pay", metric="p99", unit="ms", values=[1, 2, 9, 3]),
    )
    _body, wecom = _send(WeCom(), report)
    content = wecom["markdown"]["content"]
    assert content.startswith("**✅ PASS · verified** · **Most likely cause (inferred): the pool limit was lowered.**")
    for shown in ("1. pool exhausted at 10:01 (observed)", "slow SQL — would be confirmed by: slow log"):
        assert shown in content
    assert "- check the pool size" in content and "- no database metrics" in content
    assert "`▁▂█▃`" in content and "1ms – 9ms" in content and content.endswith(f"({LINK})")


# -- the sparkline -------------------------------------------------------------------------


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=24))
def test_the_sparkline_maps_larger_values_to_bars_no_lower(values: list[float]) -> None:
    line = sparkline(values, width=24)
    assert len(line) == len(values) and set(line) <= set(BARS)
    drawn = list(zip(values, line, strict=True))
    for a, bar_a in drawn:  # every pair: a larger value never draws a lower bar
        for b, bar_b in drawn:
            if a <= b:
                assert BARS.index(bar_a) <= BARS.index(bar_b)
    if len(set(values)) > 1:
        assert BARS[0] in line and BARS[-1] in line


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=500), st.integers(-3, 60))
def test_the_sparkline_never_crashes_and_keeps_its_width(values: list[float], width: int) -> None:
    line = sparkline(values, width)
    assert len(line) <= max(0, width) and set(line) <= set(BARS + " ")


def test_the_sparkline_of_a_constant_empty_or_missing_series() -> None:
    assert sparkline([]) == "" and sparkline([math.nan, math.nan]) == "" and sparkline([math.inf]) == ""
    assert sparkline([5.0] * 100) == BARS[0] * 24
    assert sparkline([1.7976931348623157e308, -1.7976931348623157e308]) == BARS[-1] + BARS[0]  # no overflow
    assert sparkline([1.0, math.nan, 3.0], width=3) == BARS[0] + " " + BARS[-1]
    assert sparkline([0.0] * 50 + [10.0] + [0.0] * 49, width=10).count(BARS[-1]) == 1  # a spike stays


# -- hypotheses and key facts --------------------------------------------------------------

SHARED = [
    "Compare active with max: active at max for a long time means the pool is full.",
    "Check the config change history: was `maximum-pool-size` changed before the incident?",
    "Check the database's slow-query and lock-wait metrics: is slow SQL holding the connections?",
]
FACT_7 = "At 09:58:03 payment-service recorded a config change: spring.datasource.hikari.maximum-pool-size=50 (was 100)"


def test_each_hypothesis_keeps_what_would_confirm_it_once_and_never_what_a_fact_shows() -> None:
    """The issue's alert: two hypotheses with the same three needs, one asking to check the
    change fact 7 already shows."""
    hypotheses = [
        ("The pool limit was lowered (a config change) and is too small at peak.", SHARED),
        ("Slow SQL or lock waits hold connections for a long time.", SHARED),
    ]
    shown = confirming_needs(hypotheses, [FACT_7])
    assert shown == [[SHARED[0]], [SHARED[2]]]
    flat = [need for needs in shown for need in needs]
    assert len(flat) == len(set(flat)) and SHARED[1] not in flat
    # without the fact, the check is a need again — once
    again = [need for needs in confirming_needs(hypotheses, []) for need in needs]
    assert sorted(again) == sorted(SHARED)


@given(
    st.lists(st.tuples(_text, st.lists(st.sampled_from(SHARED) | _text, max_size=5)), max_size=8),
    st.lists(_text, max_size=5),
)
def test_no_need_is_shown_twice_or_outside_the_hypotheses_that_listed_it(
    hypotheses: list[tuple[str, list[str]]], confirmed: list[str]
) -> None:
    shown = confirming_needs(hypotheses, confirmed)
    assert len(shown) == len(hypotheses)
    flat = [need for needs in shown for need in needs]
    assert len(flat) == len(set(flat))
    for (_, listed), needs in zip(hypotheses, shown, strict=True):
        assert set(needs) <= {n.strip() for n in listed}


def _document(
    texts: list[str],
    *,
    key_facts: list[str] | None,
    allowed: set[str] | None = None,
    final_answer: str = "x",
    scope: str = "",
    headline: str = "",
) -> AnswerDocument:
    """A completed document of claims ``c1``… with ``texts``, each citing one metrics invocation
    (``c3`` cites #3); ``allowed`` ids (all by default) are facts."""
    claims = [
        ClaimItem(
            claim_id=f"c{i}",
            claim_text=text,
            verification="direct_observation",
            allowed=allowed is None or f"c{i}" in allowed,
            evidence=[EvidenceItem(invocation_id=i, tool_name="query_metrics", excerpt=f"line {i}")],
        )
        for i, text in enumerate(texts, 1)
    ]
    return AnswerDocument(
        session_id="s-1",
        verdict="PASS",
        final_answer=final_answer,
        answer_source="template",
        claims=claims,
        hypotheses=[],
        missing_info=[],
        recommended_actions=[],
        gatekeeper=None,
        rounds=1,
        engine={},
        status="completed",
        error=None,
        headline=headline,
        scope=scope,
        key_facts=key_facts,
    )


def _chat_report(document: AnswerDocument) -> AnswerReport:
    return build_report(document, question="why?", lang="en", link=LINK, redactor=default_redactor())


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_chat_lists_the_answers_key_facts_in_the_answers_order(data: st.DataObject) -> None:
    """One ranking for the terminal, the Markdown and chat: the key facts the composer input
    ranked (carried by the answer document), in its order — an id the answer lists that is no
    allowed fact is skipped, never replaced by another."""
    count = data.draw(st.integers(1, 12))
    texts = [f"svc-{i:02d} http_error_percent rose abnormally 10:0{i % 10}–10:29" for i in range(1, count + 1)]
    ids = [f"c{i}" for i in range(1, count + 1)]
    allowed = set(data.draw(st.lists(st.sampled_from(ids), unique=True, min_size=1)))
    ranked = data.draw(st.permutations(ids))[: data.draw(st.integers(0, MAX_KEY_FACTS))]
    report = _chat_report(_document(texts, key_facts=ranked, allowed=allowed))
    expected = [claim_id for claim_id in ranked if claim_id in allowed]
    assert report.key_facts == expected
    _body, wecom = _send(WeCom(), report)
    listed = [line.split(". ", 1)[1] for line in _fact_lines(wecom["markdown"]["content"])]
    by_id = dict(zip(ids, texts, strict=True))
    assert listed == [f"{by_id[claim_id]} (observed)" for claim_id in expected]
    # the culprit's series is the first one the key facts cite
    if expected:
        assert trend_invocation(report.facts, report.key_facts) == int(expected[0][1:])


def test_a_document_without_a_ranking_lists_its_first_facts_and_an_empty_one_none() -> None:
    """A document stored before the answer had its shape carries no key facts: chat lists its
    first allowed facts. One whose answer lists no key fact (everything is in its first line)
    lists none — not the first facts again."""
    texts = [f"fact {i}" for i in range(1, 9)]
    old = _chat_report(_document(texts, key_facts=None, allowed={"c2", "c3", "c4", "c5", "c6", "c7", "c8"}))
    assert old.key_facts == ["c2", "c3", "c4", "c5", "c6"]
    assert _chat_report(_document(texts, key_facts=[])).key_facts == []


def test_the_first_line_is_the_answers_first_line_after_its_scope() -> None:
    scope = "Time window: 10:00 – 11:00 (UTC); services: payment-service."
    line = "Inferred — Most likely cause: A came before B at 10:00. C rose (×8.5)."
    answer = f"{scope}\n\n{line}\n\nKey facts:\n- C rose"
    document = _document(["C rose"], key_facts=[], final_answer=answer, scope=scope, headline="ignored")
    assert first_line(document) == line
    # a document without its scope (an older version's): the headline, the line the template opens with
    older = document.model_copy(update={"scope": "", "headline": "最可能的原因（推断）：A 早于 B。C 异常升高。"})
    assert first_line(older) == "最可能的原因（推断）：A 早于 B。C 异常升高。"
    assert first_line(older.model_copy(update={"headline": ""})) == ""
    long = document.model_copy(update={"final_answer": f"{scope}\n\n{'word ' * 200}"})
    assert len(first_line(long)) <= FIRST_LINE_CHARS and first_line(long).endswith("…")
