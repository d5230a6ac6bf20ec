"""Evidence charts (issue 17 item 3): every point a chart marks as cited is a point its
invocation stored (time and value) — for each bundled demo incident, in both languages; the SVG
is well-formed XML whose axes and marks sit where a hand-built series puts them; any series
renders without a NaN; the log template table shows the invocation's own counts."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st

from veridiag.api import create_app
from veridiag.api.charts import (
    CHAR_WIDTH,
    HEIGHT,
    TOP,
    CitedPoint,
    CountChart,
    MetricChart,
    count_svg,
    metric_svg,
)
from veridiag.api.evidence import chart_words, evidence_charts, log_figure
from veridiag.config import Settings
from veridiag.contracts.audit import AuditChain
from veridiag.contracts.invocation import InvocationRecord
from veridiag.contracts.json import json_object, json_objects
from veridiag.pipeline.factory import Assembly, assemble
from veridiag.text.render import format_value, invocation_json, parse_value
from veridiag.tools.backends.embedded._logs import LogDetails
from veridiag.tools.demo.loader import bundled_environment
from veridiag.tools.render import POINTS_HEADING, stored_points

SVG = "{http://www.w3.org/2000/svg}"
#: How Python writes a float that is no finite number ("dominant-baseline" is no NaN).
NOT_A_NUMBER = re.compile(r"\b(nan|inf|infinity)\b", re.IGNORECASE)
#: Attributes that hold coordinates: each must be a finite number.
COORDINATES = ("x", "y", "width", "height", "cx", "cy", "r", "x1", "x2", "y1", "y2")
#: One question per bundled incident and language.
QUESTIONS = [(incident.id, question) for incident in bundled_environment().incidents for question in incident.questions]


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    assembly: Assembly = assemble(Settings(home=tmp_path_factory.mktemp("charts")))
    return TestClient(create_app(Settings(home=Path("/nonexistent")), assembly=assembly), base_url="http://localhost")


@dataclass
class Asked:
    """A diagnosed demo question: its audit chain and session page."""

    chain: AuditChain
    page: str
    invocations: dict[int, InvocationRecord] = field(default_factory=dict)


@pytest.fixture(scope="module")
def asked(client: TestClient) -> dict[str, Asked]:
    sessions = {}
    for incident, question in QUESTIONS:
        reply = client.post("/api/v1/chat", json={"query": question})
        assert reply.status_code == 200, reply.text
        session_id = reply.json()["session_id"]
        chain = AuditChain.model_validate(client.get(f"/api/v1/sessions/{session_id}/audit").json())
        lang = "zh" if re.search(r"[\u4e00-\u9fff]", question) else "en"
        page = client.get(f"/sessions/{session_id}?lang={lang}")
        assert page.status_code == 200
        sessions[f"{incident}:{lang}"] = Asked(chain, page.text, {i.id: i for i in chain.invocations})
    return sessions


def _figures(page: str, css: str) -> dict[int, str]:
    """Each ``<figure class=css id=…-N>`` of the page by invocation id N (first occurrence)."""
    found: dict[int, str] = {}
    for match in re.finditer(rf'<figure class="{css}" id="[^"]*-(\d+)">(.*?)</figure>', page, re.S):
        found.setdefault(int(match.group(1)), match.group(2))
    return found


def _svgs(html: str) -> list[ET.Element]:
    """Every inline SVG of ``html``, parsed as the XML document it must be on its own."""
    return [ET.fromstring(svg) for svg in re.findall(r"<svg .*?</svg>", html, re.S)]


def _output_points(output: str) -> list[str]:
    return output.partition("\n" + POINTS_HEADING + "\n")[2].splitlines()


def _allowed(chain: AuditChain) -> set[str]:
    return {str(c.get("claim_id")) for c in json_objects(json_object(chain.composer.input).get("allowed_claims"))}


def _unit(invocation: InvocationRecord) -> str:
    unit = (invocation.retrieval_details or {}).get("unit")
    assert isinstance(unit, str)
    return unit


@pytest.mark.parametrize("key", sorted({f"{incident}:en" for incident, _q in QUESTIONS}))
def test_every_cited_point_is_a_point_its_invocation_stored(asked: dict[str, Asked], key: str) -> None:
    """Issue 17 item 5's cited-point test: a ring's time and value, written as the output writes
    a point, is a line of the invocation's stored points, and the claims it names are allowed."""
    for lang_key in (key, key.replace(":en", ":zh")):
        session = asked[lang_key]
        figures = _figures(session.page, "evidence-chart")
        cited_claims = _allowed(session.chain)
        marked = 0
        for invocation_id, figure in figures.items():
            invocation = session.invocations[invocation_id]
            stored = set(_output_points(invocation.output))
            (svg,) = _svgs(figure)
            for ring in svg.iter(f"{SVG}circle"):
                if "cited" not in ring.get("class", ""):
                    continue
                moment, value = ring.get("data-time"), float(ring.get("data-value", "nan"))
                assert f"{moment} {format_value(value, _unit(invocation))}" in stored
                assert set(ring.get("data-claims", "").split(", ")) <= cited_claims
                marked += 1
        # Every incident's answer quotes a metric's peak: the test is not vacuous.
        assert marked, f"{lang_key}: no cited point drawn"


def test_claim_panel_draws_the_claims_own_points(client: TestClient, asked: dict[str, Asked]) -> None:
    """The claim panel (htmx fragment) charts the metrics the claim cites, ringing its points only."""
    session = asked["payment-pool-exhaustion:en"]
    drawn = 0
    for claim_id in sorted(_allowed(session.chain)):
        fragment = client.get(
            f"/sessions/{session.chain.session.id}/claims/{claim_id}?lang=en", headers={"HX-Request": "true"}
        ).text
        for invocation_id, figure in _figures(fragment, "evidence-chart").items():
            invocation = session.invocations[invocation_id]
            stored = set(_output_points(invocation.output))
            for ring in (r for svg in _svgs(figure) for r in svg.iter(f"{SVG}circle") if "cited" in r.get("class", "")):
                value = float(ring.get("data-value", "nan"))
                assert f"{ring.get('data-time')} {format_value(value, _unit(invocation))}" in stored
                assert ring.get("data-claims") == claim_id
                drawn += 1
    assert drawn


def test_stored_points_read_back_every_point_line(asked: dict[str, Asked]) -> None:
    """The reader of a stored output's points gives back exactly the lines the writer wrote."""
    read = 0
    for session in asked.values():
        for invocation in session.chain.invocations:
            if invocation.tool_name == "query_metrics" and invocation.status == "ok":
                unit = _unit(invocation)
                points = stored_points(invocation.output, unit)
                assert [f"{t:%Y-%m-%dT%H:%M:%SZ} {format_value(v, unit)}" for t, v in points] == _output_points(
                    invocation.output
                )
                read += len(points)
    assert read


def test_log_template_table_counts_are_the_invocations_counts(asked: dict[str, Asked]) -> None:
    """Each row's template and count is the stored pattern's; the bars add up to the lines matched."""
    tables = 0
    for session in asked.values():
        for invocation_id, figure in _figures(session.page, "evidence-logs").items():
            details = LogDetails.model_validate(session.invocations[invocation_id].retrieval_details)
            patterns = [(p.service, p.template, p.count) for p in details.patterns]
            rows = re.findall(
                r'<td class="num">(\d+)</td><td>(?:<span class="service">(.*?)</span> )?<code>(.*?)</code></td>',
                figure,
                re.S,
            )
            read = [(_unescape(service) or None, _unescape(template), int(count)) for count, service, template in rows]
            assert read == patterns
            (svg,) = _svgs(figure)
            bars = [int(re.findall(r": (\d+) ", bar.findtext(f"{SVG}title", ""))[0]) for bar in svg.iter(f"{SVG}rect")]
            assert details.counts_over_time is not None
            counted = details.matched if details.counted is None else details.counted
            assert sum(bars) == counted == sum(details.counts_over_time.counts)
            tables += 1
    assert tables


def _unescape(text: str) -> str:
    return (
        text.replace("&lt;", "<").replace("&gt;", ">").replace("&#39;", "'").replace("&#34;", '"').replace("&amp;", "&")
    )


def test_counts_over_time_are_never_grounding_text() -> None:
    """Drawn figures no output line states: the Gatekeeper's text of the details leaves them out."""
    details = {"matched": 3, "counts_over_time": {"start": "2026-07-07T10:00:00Z", "step_seconds": 60, "counts": [77]}}
    assert invocation_json(details) == '{"matched": 3}'


def test_a_template_row_of_a_search_over_every_service_is_cited_by_its_own_services_line() -> None:
    """Over every service a template is counted per service: each row shows its service, and a
    claim quoting one service's row does not mark another service's row of the same template."""
    template = "order=<*> ERR_TIMEOUT request timeout"
    details = {
        "backend": "embedded",
        "matched": 30,
        "patterns": [
            {"template": template, "count": 20, "example": "a", "service": "svc-a"},
            {"template": template, "count": 10, "example": "b", "service": "svc-b"},
        ],
    }
    invocation = InvocationRecord(
        id=7, session_id="s-1", tool_name="query_logs", arguments={"query": "timeout"}, retrieval_details=details
    )
    quoted = [("claim-1", f"  10× ERROR service=svc-b 2026-07-07T10:00:00Z – 2026-07-07T10:09:00Z {template}")]
    figure = log_figure(invocation, quoted, chart_words("en"), "logs-7")
    assert [(row.service, row.count, row.cited_by) for row in figure.rows] == [
        ("svc-a", 20, []),
        ("svc-b", 10, ["claim-1"]),
    ]


# -- hand-built series ---------------------------------------------------------------------

T0 = datetime(2026, 7, 7, 10, 0, tzinfo=UTC)


def _hand_built() -> tuple[MetricChart, ET.Element]:
    chart = MetricChart(
        chart_id="c",
        title="payment-service · http_request_p99_ms",
        unit="ms",
        points=[(T0 + timedelta(minutes=i), v) for i, v in enumerate([0.0, 50.0, 100.0, 50.0, 0.0])],
        window=(T0, T0 + timedelta(minutes=4)),
        baseline=20.0,
        anomalies=[(T0 + timedelta(minutes=1), T0 + timedelta(minutes=3))],
        cited=[CitedPoint(at=T0 + timedelta(minutes=2), value=100.0, claim_ids=["claim-3"], href="/x")],
    )
    return chart, ET.fromstring(str(metric_svg(chart, chart_words("en"))))


def test_axis_and_values_of_a_hand_built_series() -> None:
    _chart, svg = _hand_built()
    ticks = [t.text for t in svg.iter(f"{SVG}text") if t.get("class") == "tick"]
    assert ticks == ["0ms", "25ms", "50ms", "75ms", "100ms", "10:00", "10:01", "10:02", "10:03", "10:04"]
    grid = {t.text: float(t.get("y", "nan")) for t in svg.iter(f"{SVG}text") if t.get("class") == "tick"}
    times = {t.text: float(t.get("x", "nan")) for t in svg.iter(f"{SVG}text") if t.get("class") == "tick"}
    path = svg.find(f"{SVG}path")
    assert path is not None
    xy = [(float(x), float(y)) for x, y in re.findall(r"[ML]([-\d.]+) ([-\d.]+)", path.get("d", ""))]
    assert [x for x, _y in xy] == [times[f"10:0{i}"] for i in range(5)]
    assert [y for _x, y in xy] == [grid["0ms"], grid["50ms"], grid["100ms"], grid["50ms"], grid["0ms"]]
    assert grid["100ms"] == TOP and grid["0ms"] == HEIGHT - 30
    (ring,) = [c for c in svg.iter(f"{SVG}circle") if c.get("class") == "cited"]
    assert (float(ring.get("cx", "nan")), float(ring.get("cy", "nan"))) == (times["10:02"], grid["100ms"])
    assert (ring.get("data-time"), ring.get("data-value"), ring.get("data-claims")) == (
        "2026-07-07T10:02:00Z",
        "100.0",
        "claim-3",
    )
    baseline = next(line for line in svg.iter(f"{SVG}line") if line.get("class") == "baseline")
    assert float(baseline.get("y1", "nan")) == pytest.approx(grid["0ms"] + (grid["100ms"] - grid["0ms"]) * 0.2, abs=0.1)
    (episode,) = [r for r in svg.iter(f"{SVG}rect") if r.get("class") == "anomaly"]
    assert float(episode.get("x", "nan")) == times["10:01"]
    assert float(episode.get("x", "nan")) + float(episode.get("width", "nan")) == pytest.approx(
        times["10:03"], abs=0.15
    )


def test_a_chart_names_itself_with_its_key_numbers_in_both_languages() -> None:
    chart, svg = _hand_built()
    label = svg.get("aria-label", "")
    assert svg.get("role") == "img"
    assert svg.findtext(f"{SVG}title") == chart.title
    for number in ("peak 100ms 10:02", "baseline 20ms", "anomaly 10:01–10:03", "cited (claim-3) 100ms 10:02"):
        assert number in label and number in svg.findtext(f"{SVG}desc", "")
    zh = ET.fromstring(str(metric_svg(chart, chart_words("zh"))))
    assert "峰值 100ms" in zh.get("aria-label", "") and "基线 20ms" in zh.get("aria-label", "")


def test_an_episode_across_midnight_on_a_short_chart_names_its_dates() -> None:
    """Issue 28: a chart of a few hours around midnight writes its ticks as clocks, but an
    episode from 23:40 to 00:20 is labelled with its dates, never "23:40–00:20"."""
    late = datetime(2026, 2, 25, 23, 30, tzinfo=UTC)
    chart = MetricChart(
        chart_id="m",
        title="orders-db · query_p99_ms",
        unit="ms",
        points=[(late + timedelta(minutes=10 * i), 20.0 + (900.0 if 1 <= i <= 5 else 0.0)) for i in range(8)],
        window=(late, late + timedelta(minutes=70)),
        baseline=20.0,
        anomalies=[(late + timedelta(minutes=10), late + timedelta(minutes=50))],
    )
    svg = ET.fromstring(str(metric_svg(chart, chart_words("en"))))
    label = svg.get("aria-label", "")
    assert "anomaly 2026-02-25 23:40 – 2026-02-26 00:20" in label, label
    assert "8 points 2026-02-25 23:30 – 2026-02-26 00:40" in label, label
    (episode,) = [r for r in svg.iter(f"{SVG}rect") if r.get("class") == "anomaly"]
    assert "2026-02-25 23:40 – 2026-02-26 00:20" in (episode.findtext(f"{SVG}title") or "")


def test_only_allowed_claims_are_drawn() -> None:
    """A blocked claim's excerpt rings nothing and charts nothing: unverified material is absent."""
    output = "query_metrics service=s metric=m\n" + POINTS_HEADING + "\n2026-07-07T10:02:00Z 100ms"
    record = InvocationRecord(
        id=7, session_id="s-1", tool_name="query_metrics", output=output, retrieval_details={"unit": "ms"}
    )

    @dataclass
    class Excerpt:
        invocation_id: int
        excerpt: str

    @dataclass
    class Claim:
        claim_id: str
        allowed: bool
        evidence: list[Excerpt]

    quoted = [Excerpt(7, "2026-07-07T10:02:00Z 100ms")]
    blocked = evidence_charts([record], [Claim("claim-1", False, quoted)], session_id="s-1", lang="en")
    assert blocked.metrics == [] and blocked.logs == []
    allowed = evidence_charts([record], [Claim("claim-1", True, quoted)], session_id="s-1", lang="en")
    assert [(p.claim_id, p.value, p.at) for p in allowed.metrics[0].cited] == [
        ("claim-1", "100ms", "2026-07-07T10:02:00Z")
    ]


# -- any series ------------------------------------------------------------------------------

moments = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.sampled_from([UTC, None])
)
values = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([0.0, -0.0, 1e308, -1e308, 5e-324, 42.0])


def _finite_coordinates(svg: ET.Element) -> None:
    for element in svg.iter():
        for name in COORDINATES:
            if name in element.attrib:
                assert math.isfinite(float(element.attrib[name])), (element.tag, name, element.attrib[name])
        if "d" in element.attrib:
            assert all(math.isfinite(float(n)) for n in re.findall(r"[-\d.e+]+", element.attrib["d"]))


@given(
    points=st.lists(st.tuples(moments, values), max_size=40),
    baseline=st.none() | values,
    cited=st.lists(st.tuples(moments, values), max_size=3),
    unit=st.sampled_from(["", "ms", "%", "connections", "restarts/s"]),
    lang=st.sampled_from(["zh", "en"]),
)
def test_any_series_renders_without_error_or_nan(
    points: list[tuple[datetime, float]],
    baseline: float | None,
    cited: list[tuple[datetime, float]],
    unit: str,
    lang: str,
) -> None:
    chart = MetricChart(
        chart_id="any",
        title="s · m",
        unit=unit,
        points=points,
        baseline=baseline,
        anomalies=[(a, b) for (a, _v), (b, _w) in zip(points[::2], points[1::2], strict=False)],
        cited=[CitedPoint(at=t, value=v, claim_ids=["claim-1"]) for t, v in cited],
    )
    text = str(metric_svg(chart, chart_words(lang)))
    assert not NOT_A_NUMBER.search(text)
    _finite_coordinates(ET.fromstring(text))


@given(
    counts=st.lists(st.integers(min_value=-5, max_value=10**12), max_size=80),
    step=st.integers(min_value=-60, max_value=86400 * 30),
    start=moments,
)
def test_any_volume_renders_without_error_or_nan(counts: list[int], step: int, start: datetime) -> None:
    text = str(
        count_svg(CountChart(chart_id="v", title="s", start=start, step_seconds=step, counts=counts), chart_words("en"))
    )
    assert not NOT_A_NUMBER.search(text)
    _finite_coordinates(ET.fromstring(text))


@given(
    value=st.floats(allow_nan=False, allow_infinity=False, min_value=-1e15, max_value=1e15),
    unit=st.sampled_from(["", "ms", "%", "/s", "connections", "restarts/s"]),
)
def test_parse_value_reads_what_format_value_writes(value: float, unit: str) -> None:
    written = format_value(value, unit)
    read = parse_value(written, unit)
    assert read is not None and format_value(read, unit) == written


def test_a_short_episode_in_a_long_series_is_shown_zoomed_with_context() -> None:
    """A week of points with a 30-minute episode: the axis covers the episode and two hours
    either side (a Grafana panel zoomed to the incident), not the week."""
    week = [(T0 - timedelta(days=7) + timedelta(minutes=5 * i), 10.0 + i % 3) for i in range(7 * 288)]
    episode = (T0 - timedelta(hours=6), T0 - timedelta(hours=5, minutes=30))
    chart = MetricChart(
        chart_id="w",
        title="week",
        unit="ms",
        points=week,
        window=(week[0][0], week[-1][0]),
        anomalies=[episode],
        cited=[CitedPoint(at=episode[0], value=week[0][1], claim_ids=["claim-1"], href="/x")],
    )
    svg = ET.fromstring(str(metric_svg(chart, chart_words("en"))))
    stamps = [t.text or "" for t in svg.iter(f"{SVG}text") if t.get("class") == "tick" and ":" in (t.text or "")]
    assert stamps and all(s.endswith(":00") or s.endswith(":30") for s in stamps), stamps
    path = svg.find(f"{SVG}path")
    assert path is not None
    drawn = re.findall(r"[ML]([-\d.]+) ([-\d.]+)", path.get("d", ""))
    assert 50 <= len(drawn) <= 5 * 12 + 6 + 1, "the episode and two hours either side, at 5-minute steps"
    quiet = chart.model_copy(update={"anomalies": [], "cited": []})
    whole = ET.fromstring(str(metric_svg(quiet, chart_words("en")))).find(f"{SVG}path")
    assert whole is not None and len(re.findall(r"[ML]", whole.get("d", ""))) > len(drawn)


def _label_boxes(svg: ET.Element) -> list[tuple[float, float, float, float, str]]:
    """Each cited value's text as a box (left, top, right, bottom) the way the chart measures it."""
    boxes = []
    for text in svg.iter(f"{SVG}text"):
        if "cited-label" in text.get("class", ""):
            x, y, width = float(text.get("x", 0)), float(text.get("y", 0)), CHAR_WIDTH * len(text.text or "")
            anchor = text.get("text-anchor")
            left = x - width / 2 if anchor == "middle" else (x if anchor == "start" else x - width)
            boxes.append((left, y - 10, left + width, y + 2, text.text or ""))
    return boxes


@given(
    points=st.lists(st.tuples(moments, values), min_size=2, max_size=30),
    cited=st.lists(st.integers(min_value=0, max_value=29), min_size=1, max_size=6),
)
def test_cited_values_never_print_over_each_other(points: list[tuple[datetime, float]], cited: list[int]) -> None:
    """Two cited points close together printed "88.088.51%": every label drawn covers no other,
    and a chart citing one point always prints its value (a value that is no finite number is
    never drawn: the module's rule; the description counts it)."""
    chosen = list(dict.fromkeys(points[i % len(points)] for i in cited))  # a point is cited once, by its claims
    chart = MetricChart(
        chart_id="close",
        title="s · m",
        unit="%",
        points=points,
        baseline=None,
        anomalies=[],
        cited=[CitedPoint(at=t, value=v, claim_ids=["claim-1"]) for t, v in chosen],
    )
    boxes = _label_boxes(ET.fromstring(str(metric_svg(chart, chart_words("en")))))
    for index, a in enumerate(boxes):
        for b in boxes[index + 1 :]:
            assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]), (a, b)
    if len(chosen) == 1:
        assert len(boxes) == (1 if math.isfinite(chosen[0][1]) else 0)


def test_two_close_cited_points_both_show_their_values() -> None:
    """cartservice's CPU cited at 04:37 (88.06 %) and 04:39 (88.51 %): both values readable."""
    week = [(T0 + timedelta(minutes=i), 6.0 + (82.0 if 30 <= i <= 33 else 0.0)) for i in range(50)]
    cited = [
        CitedPoint(at=T0 + timedelta(minutes=30), value=88.06, claim_ids=["claim-7"]),
        CitedPoint(at=T0 + timedelta(minutes=32), value=88.51, claim_ids=["claim-1"]),
    ]
    chart = MetricChart(
        chart_id="c", title="cartservice · cpu", unit="%", points=week, baseline=6.34, anomalies=[], cited=cited
    )
    shown = [b[4] for b in _label_boxes(ET.fromstring(str(metric_svg(chart, chart_words("en")))))]
    assert sorted(shown) == ["88.06%", "88.51%"]
