"""Issue 28: an episode that crosses midnight is written with its dates, and a moment asked
inside a long episode gets its own value — in the metrics output (``query_metrics`` ``at``) and
so in the answer — through the offline pipeline on a store of its own."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.builders import readable
from veridiag.config import Settings
from veridiag.pipeline.factory import assemble
from veridiag.tools.args import QueryMetricsArgs
from veridiag.tools.backends.embedded import EmbeddedEnvironment
from veridiag.tools.readback import PointLine, read_line
from veridiag.tools.records import MetricEvidence

START = datetime(2026, 2, 18, tzinfo=UTC)
ONSET, END = datetime(2026, 2, 25, 7, 15, tzinfo=UTC), datetime(2026, 2, 27, 2, 45, tzinfo=UTC)
PEAK = datetime(2026, 2, 26, 0, 45, tzinfo=UTC)
STEP = timedelta(minutes=5)


def _value(index: int, moment: datetime, *, spike: bool) -> float:
    """orders-db's p99: ~23 ms, ~920 ms from Feb 25 07:15 to Feb 27 02:45 (2000 ms at 00:45 with
    ``spike``; else its peak is 939 ms on Feb 25 10:05, long before the moment asked)."""
    if spike and moment == PEAK:
        return 2000.0
    return float(900 + (index * 7) % 40 if ONSET <= moment <= END else 20 + (index * 3) % 7)


def _home(tmp_path_factory: pytest.TempPathFactory, *, spike: bool) -> Settings:
    folder = tmp_path_factory.mktemp("asked")
    settings = Settings(home=folder / "home", embedded={"load_demo": False})
    env = EmbeddedEnvironment(settings.embedded_path, load_demo=False)
    rows: list[tuple[str, str, str, datetime, float]] = []
    moment, index = START, 0
    while moment < datetime(2026, 2, 28, tzinfo=UTC):
        rows.append(("orders-db", "query_p99_ms", "ms", moment, _value(index, moment, spike=spike)))
        rows.append(("api-gw", "p99_ms", "ms", moment, float(100 + index % 9)))
        moment, index = moment + STEP, index + 1
    env.add_metric_points(rows)
    env.close()
    return settings


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return _home(tmp_path_factory, spike=True)


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return _home(tmp_path_factory, spike=False)


def _asked(settings: Settings, start: str, end: str, at: str | None) -> MetricEvidence:
    env = EmbeddedEnvironment(settings.embedded_path, load_demo=False)
    try:
        args = QueryMetricsArgs(service="orders-db", metric="query_p99_ms", start=start, end=end, at=at)
        output = env.query_metrics(args)
    finally:
        env.close()
    (series,) = output.evidence
    assert isinstance(series, MetricEvidence)
    if series.asked is not None:
        lines = (output.text or "").split("\n")
        assert series.asked.line in lines and series.asked.point_line in lines
    return series


def test_the_metrics_output_states_the_value_nearest_the_moment_asked(home: Settings) -> None:
    # a week at 5-minute steps is thinned to the stored points: the asked one is kept all the same
    series = _asked(home, "2026-02-20T00:00:00Z", "2026-02-27T12:00:00Z", "2026-02-26T00:52:00Z")
    asked = series.asked
    assert asked is not None
    assert (asked.at, asked.value) == (datetime(2026, 2, 26, 0, 50, tzinfo=UTC), 938.0)
    assert asked.line == "at the moment asked 2026-02-26T00:52:00Z: nearest point 2026-02-26T00:50:00Z 938ms"
    read = read_line("query_metrics", asked.line)
    assert isinstance(read, PointLine) and (read.at, read.value) == (asked.at, "938ms")
    assert _asked(home, "2026-02-26T00:00:00Z", "2026-02-26T06:00:00Z", "2026-02-26T07:00:00Z").asked is None
    assert _asked(home, "2026-02-26T00:00:00Z", "2026-02-26T06:00:00Z", None).asked is None


def _claims(settings: Settings, question: str) -> tuple[str, list[str]]:
    result = assemble(settings).pipeline.run(question)
    evaluation = readable(result.self_evaluation)["verifier_evaluation"]
    kept = {c["claim_id"] for c in evaluation["composer_input"]["allowed_claims"]}
    claims: list[dict[str, Any]] = evaluation["executor_structured_output"]["claims"]
    return result.answer or "", [c["claim_text"] for c in claims if c["claim_id"] in kept]


@pytest.mark.parametrize(
    ("question", "period", "value"),
    [
        (
            "why was orders-db slow on Feb 26 at 00:50?",
            "rose abnormally 2026-02-25 07:15 – 2026-02-26 01:15: peak 2000ms (2026-02-26 00:45)",
            "at 2026-02-26 00:50, the point nearest the moment asked: 938ms",
        ),
        (
            "orders-db 2月26日 00:50 为什么慢？",
            "在 2026-02-25 07:15 至 2026-02-26 01:15 异常升高：峰值 2000ms（2026-02-26 00:45）",
            "所问时刻最近的数据点 2026-02-26 00:50 为 938ms",
        ),
    ],
)
def test_an_episode_across_midnight_is_dated_and_the_moment_asked_gets_its_value(
    home: Settings, question: str, period: str, value: str
) -> None:
    answer, allowed = _claims(home, question)
    episode = [c for c in allowed if period in c]
    assert episode, allowed
    assert value in episode[0], episode
    # the answer's first line may drop a parenthesis to fit (issue 28's shape): the dated period leads
    assert period.split(":", 1)[0].split("：", 1)[0] in answer and value in answer
    # no period whose ends lie on different days is written without its dates
    assert not re.search(r"(?<![\d-] )(?<![\d:])07:15\s*(?:–|至)\s*01:15", answer), answer


def test_a_moment_inside_an_episode_that_began_and_peaked_before_the_window_is_in_that_episode(
    plain: Settings,
) -> None:
    """The hour around 00:50 lies inside the episode that began and peaked the day before: the
    answer states that episode with the value at 00:50, never "no deviation from its own history"."""
    answer, allowed = _claims(plain, "why was orders-db slow at 00:50 on Feb 26?")
    episode = [c for c in allowed if "rose abnormally 2026-02-25 07:15 – 2026-02-26 01:15" in c]
    assert episode, allowed
    # it answers: the line after the scope line, and no "none changed" beside it
    first = answer.split("\n\n")[1]
    assert "rose abnormally 2026-02-25 07:15 – 2026-02-26 01:15" in first, answer
    assert "None of the 2 services" not in answer, answer
    assert "peak 939ms (2026-02-25 10:05)" in episode[0]
    assert "at 2026-02-26 00:50, the point nearest the moment asked: 938ms" in episode[0]
    assert not [c for c in allowed if "query_p99_ms of orders-db stayed between" in c], allowed
