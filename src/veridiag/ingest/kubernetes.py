"""A Kubernetes pod's workload — the service its telemetry belongs to — from the pod's name.

Kubernetes names a pod after its controller with a generated tail: a Deployment's pod is
``<deployment>-<pod-template-hash>-<suffix>`` (``recommendationservice-6cfdd55578-gfj6q``), a
DaemonSet's, a Job's or a bare ReplicaSet's ``<name>-<suffix>`` (``node-exporter-x7k2p``), a
CronJob's ``<cronjob>-<minutes>-<suffix>``, a StatefulSet's ``<name>-<ordinal>``
(``redis-cart-0``). The suffix and the hash are drawn from apimachinery's safe alphabet (no
vowels, no ``0``/``1``/``3``, so generated tails never spell a word) — which is what tells them
from a part of the name (``ts-order-service``, ``redis-cart``): ``service`` and ``cart`` hold
vowels. A hash is a uint32's decimal digits re-encoded, 6 to 10 characters in practice
(shorter ones have odds of about 1 in 40 000); older clusters wrote the digits themselves.

What a name alone cannot tell: a DaemonSet whose name ends in a 6-10 character segment of that
alphabet (``agent-bcdfgh``) reads as a Deployment's pod, and names Kubernetes truncated
(pod names past 63 characters lose the end of their hash) keep part of their hash. Such names
are rare; ``--service`` names the service outright.
"""

from __future__ import annotations

import re

#: apimachinery's ``rand.SafeEncodeString`` alphabet: generated suffixes and pod-template hashes.
SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_SUFFIX = rf"[{SAFE_ALPHABET}]{{5}}"
_HASH = rf"(?:[{SAFE_ALPHABET}]{{6,10}}|\d{{6,10}})"
#: Tried in order; the first that matches the whole name gives the workload.
_SHAPES = (
    re.compile(rf"(?P<workload>[a-z0-9].*?)-{_HASH}-{_SUFFIX}"),  # Deployment (and a CronJob's minutes)
    re.compile(rf"(?P<workload>[a-z0-9].*?)-{_SUFFIX}"),  # DaemonSet, Job, ReplicaSet
    re.compile(r"(?P<workload>[a-z0-9].*?)-\d+"),  # StatefulSet ordinal
)


def workload_of(pod: str) -> str:
    """The workload a pod belongs to (``ts-contacts-service-866bd68c97-xcqfx`` →
    ``ts-contacts-service``, ``redis-cart-0`` → ``redis-cart``); a name of no known shape as
    it is (a bare pod, or not a pod's name at all)."""
    name = pod.strip()
    for shape in _SHAPES:
        match = shape.fullmatch(name)
        if match is not None:
            return match["workload"]
    return name
