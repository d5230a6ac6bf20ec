"""A pod's workload from its name: Deployment, DaemonSet, Job, CronJob and StatefulSet pods of
generated workload names come back to the workload; a name's own last word is never stripped."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from veridiag.ingest.kubernetes import SAFE_ALPHABET, workload_of

NEZHA = Path(__file__).parent / "fixtures" / "nezha"

#: A word of a name as people write them: it holds a vowel (generated tails never do).
word = st.from_regex(r"[a-z0-9]{0,4}[aeiouy][a-z0-9]{0,4}", fullmatch=True)
#: Any DNS label piece (middle words may be anything: only the last one borders the tail).
piece = st.from_regex(r"[a-z0-9]{1,8}", fullmatch=True)
workloads = st.builds(
    lambda first, middle, last: "-".join([first, *middle, last]),
    word,
    st.lists(piece, max_size=3),
    word,
).filter(lambda name: len(name) <= 40 and name[0].isalnum())
safe = st.text(alphabet=SAFE_ALPHABET, min_size=5, max_size=5)
pod_template_hash = st.text(alphabet=SAFE_ALPHABET, min_size=6, max_size=10) | st.from_regex(
    r"[1-9][0-9]{5,9}", fullmatch=True
)


@given(workloads, pod_template_hash, safe)
def test_a_deployment_pod_gives_its_deployment(workload: str, template_hash: str, suffix: str) -> None:
    assert workload_of(f"{workload}-{template_hash}-{suffix}") == workload


@given(workloads, safe)
def test_a_daemonset_or_job_pod_gives_its_controller(workload: str, suffix: str) -> None:
    assert workload_of(f"{workload}-{suffix}") == workload


@given(workloads, st.integers(min_value=0, max_value=999))
def test_a_statefulset_pod_gives_its_statefulset(workload: str, ordinal: int) -> None:
    assert workload_of(f"{workload}-{ordinal}") == workload


@given(workloads, st.integers(min_value=27_000_000, max_value=30_000_000), safe)
def test_a_cronjob_pod_gives_its_cronjob(workload: str, minutes: int, suffix: str) -> None:
    assert workload_of(f"{workload}-{minutes}-{suffix}") == workload


@given(workloads)
def test_a_workload_name_itself_is_left_whole(workload: str) -> None:
    """``ts-order-service``, ``redis-cart``: a last word with a vowel is part of the name."""
    assert workload_of(workload) == workload


def test_the_nezha_culprits_are_their_services() -> None:
    """The dataset's own labels: every pod a fault was injected into, and every pod with a metric
    file, is its Deployment (the README's rule: the name without its two generated parts)."""
    for system in ("onlineboutique", "trainticket"):
        faults = json.loads((NEZHA / system / "fault_list.json").read_text(encoding="utf-8"))
        pods = {f["inject_pod"] for hour in faults.values() for f in hour}
        pods |= {p.name.removesuffix("_metric.csv") for p in (NEZHA / system / "metric").glob("*_metric.csv")}
        assert len(pods) > 3
        for pod in pods:
            assert workload_of(pod) == pod.rsplit("-", 2)[0]
    assert workload_of("redis-cart-0") == "redis-cart"
    assert workload_of("node-exporter-x7k2p") == "node-exporter"
