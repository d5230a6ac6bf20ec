"""Red team 47: "从 38.66 Mi 降到 96.8 Mi" (a flipped "涨到") reached CONFIRMED: 降到 and the other
verbs of a level reached from above with their 到/至/为 were no direction word, so nothing judged
them. They are the `down` concept (concepts.yaml): a fall the numbers or lines say is a rise
contradicts; a true one is judged as 下降 is."""

from __future__ import annotations

from hypothesis import assume, given
from hypothesis import strategies as st

from tests.builders import rule_outcome

_FALLS = ["降到", "降低到", "下降到", "减少到", "减到", "跌至", "降为", "回落到"]


def _outcome(claim: str, first: str, second: str) -> tuple[str, str]:
    output = (
        "query_metrics service=checkoutservice metric=memory_usage\n"
        f"2026-07-07T04:48:00Z {first}Mi\n2026-07-07T04:49:00Z {second}Mi"
    )
    return rule_outcome("claim.stated_content", claim, output, "\n".join(output.splitlines()[1:]))


@given(st.sampled_from(_FALLS), st.integers(100, 9999), st.integers(100, 9999))
def test_a_fall_verb_is_judged_against_its_numbers(verb: str, x: int, y: int) -> None:
    assume(x != y)
    first, second = f"{x / 100:g}", f"{y / 100:g}"
    claim = f"内存从 04:48 的 {first} Mi {verb} 04:49 的 {second} Mi。"
    outcome, reason = _outcome(claim, first, second)
    if x < y:
        assert outcome == "fail" and verb in reason, (claim, reason)
    else:
        assert outcome != "fail", (claim, reason)
