"""Questions a red team asked of the survey and the focus (rank26): a leading question does not
narrow what "stands out" is decided over, an onset is one still going on at the moment asked,
the tail of an earlier incident is not this one's, and "how bad" is never the service just
cleared — on small homes built as a user imports data."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.builders import answer_line, readable
from veridiag.config import Settings
from veridiag.ingest.dependencies import import_dependencies
from veridiag.ingest.importers import import_metrics_csv
from veridiag.pipeline.factory import assemble
from veridiag.tools.backends.embedded import EmbeddedEnvironment

START = datetime(2026, 7, 7, 8, 0, tzinfo=UTC)
MINUTES = 240

Shape = Callable[[int], float]


def noise(level: float, spread: float, seed: int) -> Shape:
    rng = random.Random(seed)
    values = [max(0.0, rng.gauss(level, spread)) for _ in range(MINUTES)]
    return lambda minute: values[minute]


def with_episode(base: Shape, first: int, last: int, level: float) -> Shape:
    return lambda minute: level if first <= minute < last else base(minute)


def build(
    tmp_path: Path,
    series: dict[tuple[str, str, str], Shape],
    edges: Sequence[tuple[str, str]] = (),
    minutes: range = range(MINUTES),
) -> Settings:
    """A home whose embedded store holds ``series`` (one value a minute from ``START``) and the
    call graph ``edges``, imported as a user imports them."""
    settings = Settings(home=tmp_path / "home", embedded={"load_demo": False})
    env = EmbeddedEnvironment(settings.embedded_path, load_demo=False)
    for index, ((service, metric, unit), shape) in enumerate(series.items()):
        rows = ["timestamp,value"]
        rows += [f"{(START + timedelta(minutes=m)).strftime('%Y-%m-%dT%H:%M:%SZ')},{shape(m):.4f}" for m in minutes]
        path = tmp_path / f"series-{index}.csv"
        path.write_text("\n".join(rows) + "\n", encoding="utf-8")
        import_metrics_csv(env, path, service=service, metric=metric, unit=unit)
    if edges:
        path = tmp_path / "dependency.csv"
        path.write_text("caller,callee\n" + "".join(f"{a},{b}\n" for a, b in edges), encoding="utf-8")
        import_dependencies(env, path)
    env.close()
    return settings


def ask(settings: Settings, question: str) -> Any:
    assembly = assemble(settings)
    try:
        return assembly.pipeline.run(question)
    finally:
        assembly.close()


def headline(answer: str) -> str:
    """The line after the scope, without its label (issue 28)."""
    return answer_line(answer)[1]


def claims(result: Any) -> list[dict[str, Any]]:
    return list(readable(result.self_evaluation)["verifier_evaluation"]["executor_structured_output"]["claims"])


def shop(seed: int, services: Sequence[str]) -> dict[tuple[str, str, str], Shape]:
    return {
        (service, metric, unit): noise(level, spread, seed * 31 + i * 7 + j)
        for i, service in enumerate(services)
        for j, (metric, unit, level, spread) in enumerate(
            [("cpu_usage_rate", "%", 5 + 3 * i, 0.8), ("latency_p95_ms", "ms", 40 + 10 * i, 2.0)]
        )
    }


# -- a leading question decides "stands out" over every service ------------------------------------


def test_is_x_to_blame_is_decided_over_every_service_not_its_neighbourhood(tmp_path: Path) -> None:
    """Asked whether shippingservice is to blame around 10:00, when paymentservice (called by no
    neighbour of shipping) saturated at 10:00 and shipping's own CPU only from 10:12 (the next
    fault): no, not shippingservice."""
    services = ["shippingservice", "checkoutservice", "paymentservice"]
    series = shop(1, services)
    cpu = ("paymentservice", "cpu_usage_rate", "%")
    series[cpu] = with_episode(series[cpu], 120, 128, 97.0)
    own = ("shippingservice", "cpu_usage_rate", "%")
    series[own] = with_episode(series[own], 132, 140, 96.0)
    settings = build(tmp_path, series, edges=[("checkoutservice", "shippingservice")])
    result = ask(settings, "Is shippingservice to blame around 10:00 on 2026-07-07?")
    assert headline(result.answer).startswith("No, not shippingservice."), result.answer
    assert "paymentservice" in headline(result.answer), result.answer


# -- when did it start ----------------------------------------------------------------------------


def test_an_onset_asked_around_a_moment_is_a_change_still_going_on_then(tmp_path: Path) -> None:
    """Around 10:01, catalogue's CPU saturated 09:35–09:39 and was over by then: the start of what
    goes on at 10:01 is recommendation's CPU from 10:01, not the earlier, finished fault — nor a
    faint ripple of another service's latency that began a little before it."""
    services = ["catalogueservice", "recommendationservice", "frontend"]
    series = shop(2, services)
    finished = ("catalogueservice", "cpu_usage_rate", "%")
    series[finished] = with_episode(series[finished], 95, 100, 96.0)
    ongoing = ("recommendationservice", "cpu_usage_rate", "%")
    series[ongoing] = with_episode(series[ongoing], 121, 131, 93.0)
    # a faint ripple elsewhere, a little earlier and still going on, is no start of the incident
    ripple = ("frontend", "latency_p95_ms", "ms")
    series[ripple] = with_episode(series[ripple], 118, 128, 3 * series[ripple](0))
    result = ask(build(tmp_path, series), "When did it start? around 10:01 on 2026-07-07")
    top = headline(result.answer)
    assert "recommendationservice" in top and "10:01" in top, result.answer
    assert "catalogueservice" not in top, result.answer


def test_the_onset_of_a_named_service_s_kind_of_change_is_its_earliest_episode_of_that_kind(
    tmp_path: Path,
) -> None:
    """Asked when recommendationservice started to be slow, its first latency episode (10:02)
    answers — not the larger one at 10:10 that its other changes crowd around."""
    services = ["recommendationservice", "frontend", "cartservice"]
    series = shop(3, services)
    name = "recommendationservice"
    series[(name, "cpu_usage_rate", "%")] = with_episode(series[(name, "cpu_usage_rate", "%")], 129, 136, 97.0)
    series[(name, "memory_usage_rate", "%")] = with_episode(noise(30, 0.3, 5), 129, 136, 60.0)
    for metric, level in (("latency_p99_ms", 9000.0), ("latency_p95_ms", 8000.0)):
        series[(name, metric, "ms")] = with_episode(noise(40, 2, len(metric)), 130, 135, level)
    series[(name, "latency_p90_ms", "ms")] = with_episode(noise(30, 2, 9), 122, 126, 900.0)
    result = ask(build(tmp_path, series), "When did recommendationservice start to be slow on 2026-07-07?")
    top = headline(result.answer)
    assert top.startswith("The earliest change") and "10:02" in top, result.answer


# -- the tail of an earlier incident ----------------------------------------------------------------


def test_the_tail_of_an_earlier_incident_is_not_stated_as_this_window_s(tmp_path: Path) -> None:
    """Asked about 10:19–11:19, orderservice's latency that began at 10:05 and peaked at 10:09 is
    an earlier incident's tail: no claim describes it as this window's change."""
    services = ["orderservice", "frontend", "cartservice"]
    series = shop(4, services)
    key = ("orderservice", "latency_p95_ms", "ms")
    base = with_episode(series[key], 125, 142, 600.0)
    series[key] = lambda m: 840_000.0 if m == 129 else base(m)
    result = ask(build(tmp_path, series), "Why is orderservice slow between 10:19 and 11:19 on 2026-07-07?")
    stated = [c["claim_text"] for c in claims(result)]
    assert not any("10:09" in text or "840" in text for text in stated), stated
    assert "10:09" not in headline(result.answer), result.answer


# -- data that begins during an incident ------------------------------------------------------------


def test_data_that_begins_during_an_incident_does_not_lead_with_its_recovery(tmp_path: Path) -> None:
    """apiservice's CPU sits at 95 % from the data's first row to 08:14, then at its usual 7.8 %:
    the answer neither leads with the fall back to normal nor states a baseline that only exists
    after the incident — it says the data begins during an elevated period."""
    services = ["apiservice", "frontend", "cartservice"]
    series = shop(5, services)
    series[("apiservice", "cpu_usage_rate", "%")] = with_episode(noise(7.8, 0.6, 11), 0, 15, 95.0)
    result = ask(
        build(tmp_path, series, minutes=range(120)), "Which service is the culprit around 08:15 on 2026-07-07?"
    )
    stated = [c["claim_text"] for c in claims(result)]
    assert "fell" not in headline(result.answer), result.answer
    assert not [t for t in stated if "apiservice" in t and "expected" in t], stated
    assert [t for t in stated if "apiservice" in t and "begins at 08:00" in t], stated
