"""Markup from evidence is inert in every destination (issue 27 D5): generated Markdown, HTML and
Slack fragments in claims, excerpts, hypotheses, gaps, steps and the question are rendered by
each destination's request; a CommonMark parser (markdown-it-py) finds no link, image or HTML
but veridiag's own workbench link, and no Slack field carries a mention or link."""

from __future__ import annotations

import json
import re
import unicodedata
from html import unescape
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token

from veridiag.config import DestinationSettings
from veridiag.contracts.delivery import AnswerReport, ReportEvidence, ReportFact, ReportHypothesis, ReportTrend
from veridiag.delivery import render_markdown
from veridiag.delivery.destination import Attempt, Destination
from veridiag.delivery.dingtalk import DingTalk
from veridiag.delivery.feishu import Feishu
from veridiag.delivery.markup import LinkWords, commonmark, html, inert, mrkdwn
from veridiag.delivery.slack import Slack
from veridiag.delivery.webhook import Webhook
from veridiag.delivery.wecom import WeCom
from veridiag.text.wordfiles import bundled_words

LINK = "https://veridiag.example.com/sessions/s-1?lang=en"
_PARSER = MarkdownIt("commonmark").enable(["table", "strikethrough"])
_LIVE = {"link_open", "image", "html_inline", "html_block", "code_block", "fence", "heading_open", "table_open"}

_url = st.sampled_from(["https://evil.example/x", "javascript:alert(1)", "//evil", "data:text/html,x", "mailto:a@b"])
_word = st.text(st.characters(categories=["L", "Nd"]), min_size=1, max_size=6)
_tld = st.sampled_from(["com", "io", "example.com", "co.uk", "xyz", "cn", "COM"])
#: Markup fragments as log lines carry them, in CommonMark, HTML and Slack spellings.
_fragment = st.one_of(
    st.builds("[{}]({})".format, _word, _url),
    st.builds("![{}]({})".format, _word, _url),
    st.builds("[{}][r]\n\n[r]: {}".format, _word, _url),
    st.builds("<{}>".format, _url),
    st.builds("<a href='{}'>{}</a>".format, _url, _word),
    st.builds("<img src={}>".format, _url),
    st.just("<script>alert(1)</script>"),
    st.builds("<{}|{}>".format, _url, _word),
    st.sampled_from(["<!channel>", "<!here>", "<!everyone>", "<@U024BE7LH>", "<#C123>", "<!subteam^S1>"]),
    st.sampled_from(["# heading", "    indented code", "```\nfence\n```", "> quote", "| a | b |\n|---|---|", "---"]),
    st.sampled_from(["&lt;script&gt;", "&#106;avascript:", "\\[x](y)", "*bold* _it_ ~~s~~ `c`"]),
)
#: Link shapes a log line carries bare, which renderers and chat clients link by themselves.
_bare_link = st.one_of(
    st.builds("{}://{}.{}/{}".format, st.sampled_from(["http", "https", "HTTPS", "ftp", "ws"]), _word, _tld, _word),
    st.builds("www.{}.{}".format, _word, _tld),
    st.builds("{}@{}.{}".format, _word, _word, _tld),
    st.builds("{}.{}".format, _word, _tld),
    st.builds("{}.{}:8443/{}".format, _word, _tld, _word),
)
#: What hides a link or a name from a reader or a check: zero-width, bidi, tag and control characters.
_hidden = st.sampled_from(
    ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u202e", "\u2066", "\U000e0041", "\x1b", "\x07"]
)
_hiding = st.builds(lambda text, mark, at: text[:at] + mark + text[at:], _bare_link, _hidden, st.integers(0, 12))
_text = st.lists(_fragment | _word | _bare_link | _hiding, min_size=1, max_size=4).map(" ".join) | st.lists(
    _fragment | _word | _bare_link | _hiding, min_size=1, max_size=3
).map("\n".join)


def _report(texts: list[str]) -> AnswerReport:
    one, two, three, four, five = texts
    return AnswerReport(
        session_id="s-1",
        question=one,
        lang="en",
        status="completed",
        verdict="PASS",
        summary=two,
        facts=[
            ReportFact(
                claim_id="c1",
                text=three,
                verification="supported",
                evidence=[ReportEvidence(invocation_id=1, tool_name="query_logs", excerpt=four)],
            )
        ],
        hypotheses=[ReportHypothesis(text=five, needs=[one])],
        gaps=[two],
        next_steps=[three],
        link=LINK,
        first_line=five,
        key_facts=["c1"],
        trend=ReportTrend(invocation_id=1, service=four, metric=one, unit="ms", values=[1.0, 3.0, 2.0]),
    )


def _live(tokens: list[Token]) -> list[Token]:
    found = []
    for token in tokens:
        if token.type in _LIVE:
            found.append(token)
        found += _live(token.children or [])
    return found


#: The one HTML veridiag writes itself: the fold around the full list of facts (whole report only).
_FOLD = re.compile(r"<details>\n<summary>[^<>]*</summary>\n|</details>\n?")


#: What a renderer or chat client links without markup (GFM's extended autolinks, Slack's bare
#: domains), and what shows nothing; written here independently of the code under test.
_AUTOLINK = re.compile(
    r"(?i)[a-z][a-z0-9+.-]*://|(?<![\w.])www\.|[\w.+-]@\w[\w-]*\.\w|\w\.(?:com|io|xyz|cn|uk|example)\b"
)


def _assert_shown_safely(text: str) -> None:
    """No link shape but veridiag's own link, no invisible or control character."""
    assert not _AUTOLINK.search(text.replace(LINK, "")), text
    hidden = [c for c in text if unicodedata.category(c) in ("Cf", "Cc", "Cs") and c not in "\n"]
    assert hidden == [], (hidden, text)


def _assert_inert(markdown: str) -> None:
    _assert_shown_safely(markdown)
    live = _live(_PARSER.parse(markdown))
    links = [t for t in live if t.type == "link_open"]
    assert [t.attrGet("href") for t in links] == [LINK], markdown
    ours = [t for t in live if t.type == "html_block" and _FOLD.fullmatch(t.content)]
    assert [t.type for t in live if t.type != "link_open" and t not in ours] == [], markdown
    assert [t.content.startswith("<details>") for t in ours] in ([], [True, False]), markdown


def _request(kind: str, report: AnswerReport) -> Any:
    target = DestinationSettings(kind=kind, url="https://hooks.example/x")
    destinations: dict[str, Destination] = {
        "slack": Slack(),
        "feishu": Feishu(),
        "dingtalk": DingTalk(),
        "wecom": WeCom(),
        "webhook": Webhook(),
    }
    outgoing = destinations[kind].request(report, target, Attempt("d-1", 1, 1_800_000_000.0))
    return json.loads(outgoing.body)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    if isinstance(value, dict):
        return [s for key, item in value.items() if key != "url" for s in _strings(item)]
    return []


@settings(max_examples=150, deadline=None)
@given(st.lists(_text, min_size=5, max_size=5))
@example(["x", "x", "x", "x", "www\x1b.0.com"])  # a domain after a dot no host holds before it (found by this test)
def test_no_link_image_or_html_from_evidence_reaches_a_markdown_destination(texts: list[str]) -> None:
    report = _report(texts)
    _assert_inert(render_markdown(report))
    _assert_inert(_request("wecom", report)["markdown"]["content"])
    _assert_inert(_request("dingtalk", report)["markdown"]["text"])
    _assert_inert(_request("feishu", report)["card"]["elements"][0]["content"])
    webhook = _request("webhook", report)
    _assert_inert(webhook["markdown"])
    assert webhook["text_format"] == "commonmark" and webhook["report"]["link"] == LINK
    for text in _strings({k: v for k, v in webhook["report"].items() if k != "link"}):
        _assert_inert(f"{text}\n\n[open]({LINK})")  # every field a receiver may render: inert too


_TAGS = st.sampled_from(
    [
        "<at id=all></at>",
        '<at user_id="all">x</at>',
        "<@all>",
        "<@U024BE7LH>",
        '<font color="warning">x</font>',
        "<b>x</b>",
    ]
)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.one_of(_text, st.builds("{} {} {}".format, _word, _TAGS, _word)), min_size=5, max_size=5))
def test_no_tag_from_evidence_reaches_a_chat_renderer_even_inside_code(texts: list[str]) -> None:
    """A chat renderer may read tags anywhere — DingTalk has no code spans, Feishu's
    ``<at id=all>`` and WeCom's ``<@…>`` mention whoever they name: no ``<`` or ``>`` from a
    session reaches a Markdown destination, an excerpt's code span included (veridiag's own
    fold aside)."""
    report = _report(texts)
    for markdown in (
        render_markdown(report),
        _request("wecom", report)["markdown"]["content"],
        _request("dingtalk", report)["markdown"]["text"],
        _request("feishu", report)["card"]["elements"][0]["content"],
    ):
        bare = _FOLD.sub("", markdown)
        assert "<" not in bare and ">" not in bare, markdown


@settings(max_examples=150, deadline=None)
@given(st.lists(_text, min_size=5, max_size=5))
def test_no_mention_or_link_from_evidence_reaches_slack(texts: list[str]) -> None:
    payload = _request("slack", _report(texts))
    for text in _strings(payload):  # every block, the notification ``text`` too
        _assert_shown_safely(text)
        assert not any(opening in text for opening in ("<!", "<@", "<#", "<http", "<javascript", "<mailto")), text
        assert "<" not in text and ">" not in text, text
    assert payload["blocks"][-1]["elements"][0]["url"] == LINK


def test_veridiag_own_formatting_still_renders() -> None:
    tokens = _PARSER.parse(render_markdown(_report(["q", "s", "fact", "excerpt", "hypo"])))
    kinds = {t.type for t in tokens} | {c.type for t in tokens for c in t.children or []}
    assert {"strong_open", "bullet_list_open", "code_inline", "link_open"} <= kinds


@given(st.text())
def test_each_dialect_renders_the_text_as_written(text: str) -> None:
    """Escaped text reads back as itself: CommonMark renders it literally, Slack and HTML decode it."""
    assert html(text).count("<") == 0 and mrkdwn(text).count(">") == 0
    rendered = _PARSER.renderInline(commonmark(" ".join(text.split())))
    assert unescape(rendered) == " ".join(inert(" ".join(text.split())).split())


@given(_bare_link, st.sampled_from(["see {} now", "({})", "{}.", "「{}」"]))
def test_a_link_shape_reads_as_written_but_links_nowhere(link: str, form: str) -> None:
    """Defanged, not deleted: with its brackets taken out the text is the one written."""
    shown = inert(form.format(link))
    _assert_shown_safely(shown)
    assert shown.replace("[.]", ".").replace("[:]", ":").replace("[@]", "@") == form.format(link)


@given(
    st.sampled_from(
        [
            "app.py",
            "run.sh",
            "java.lang.OutOfMemoryError",
            "hikari.maximum-pool-size",
            "10.0.0.1:8080",
            "v2.3.1",
            "e.g. x",
            "db.internal",
        ]
    )
)
def test_names_that_are_no_links_are_left_as_written(text: str) -> None:
    assert inert(text) == text


_TLDS = bundled_words("veridiag.delivery", "links.yaml", LinkWords).tlds


@given(
    st.lists(st.from_regex(r"[a-z0-9][a-z0-9-]{0,8}[a-z0-9]", fullmatch=True), min_size=1, max_size=3),
    st.sampled_from(_TLDS),
    st.lists(st.sampled_from([".", "\u3002", "\uff0e", "\uff61"]), min_size=3, max_size=3),
    st.sampled_from(["", "www{dot}", "https://", "user@"]),
    st.sampled_from(["", "/x", " 访问"]),
)
def test_a_host_written_with_any_dot_a_browser_reads_as_one_is_defanged(
    labels: list[str], tld: str, dots: list[str], lead: str, tail: str
) -> None:
    """ "evil。com", "evil．com", "evil｡com": the IDNA mapping and browsers read these full stops as
    "." — shown in a destination, each would be a live link."""
    host = "".join(f"{label}{dots[i % 3]}" for i, label in enumerate(labels)) + tld
    text = f"see {lead.format(dot=dots[0])}{host}{tail}"
    shown = inert(text)
    for dot in (".", "\u3002", "\uff0e", "\uff61"):
        assert f"{labels[-1]}{dot}{tld}" not in shown, (text, shown)


_RUNNING = bundled_words("veridiag.delivery", "links.yaml", LinkWords).schemes


@st.composite
def _links_for_lax_renderers(draw: st.DrawFn) -> str:
    """A link shape a chat client that ignores Markdown's backslash escapes would still make live:
    a running scheme written without "//", a protocol-relative host of any ending, as an inline
    link, an image or a reference, in any case."""
    label = draw(st.text(alphabet=st.characters(blacklist_characters="[]\\\n\r"), max_size=8))
    scheme = draw(st.sampled_from(sorted(_RUNNING)))
    spelled = draw(st.sampled_from([scheme, scheme.upper(), scheme.title()]))
    destination = draw(
        st.sampled_from(
            [
                f"{spelled}:alert(1)" if not _RUNNING[scheme] else f"{spelled}:text/html,x",
                f"{spelled} :alert(1)" if not _RUNNING[scheme] else f"{spelled}:///etc/passwd",
                "//evil.ninja/x",
                "//a.b.zz",
            ]
        )
    )
    form = draw(st.sampled_from(["[{l}]({d})", "![{l}]({d})", "[{l}][r]\n\n[r]: {d}", "see [{l}] ({d})"]))
    return form.format(l=label, d=destination)


@settings(max_examples=150, deadline=None)
@given(_links_for_lax_renderers())
def test_no_link_survives_a_renderer_that_ignores_backslash_escapes(text: str) -> None:
    """WeCom, DingTalk and Feishu render a Markdown of their own: were one to ignore backslash
    escapes, ``[x\\](javascript:…)`` would be live. Read with every backslash taken out, the
    escaped text still holds no link, image or running scheme (red team)."""
    for escaped in (commonmark(text), commonmark(text).replace("\\", "")):
        live = _live(_PARSER.parse(escaped))
        assert not [t for t in live if t.type in ("link_open", "image")], (text, escaped)
        assert not re.search(r"(?i)(?:javascript|vbscript|livescript|mocha)\s*:", escaped), (text, escaped)
        assert not re.search(r"(?i)(?:data:[\w.+-]+/|file:/)", escaped), (text, escaped)
        assert "](" not in escaped and "][" not in escaped, (text, escaped)
