"""Template mining: masking, grouping, readable templates, ids stable across save/restore, one-shot counts."""

from __future__ import annotations

from random import Random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from veridiag.tools.templates import _MASK, _VARIABLE, TemplateCount, TemplateMiner, mask, mine

HIKARI = (
    "HikariPool-1 - Connection is not available, request timed out after {ms}ms "
    "(total={t}, active={a}, idle=0, waiting={w})"
)


def test_values_are_masked_and_words_with_digits_kept() -> None:
    assert mask("order=123 cost=5300ms from 10.0.0.7:8080 id 0x1f") == "order=<#> cost=<#>ms from <#> id <#>"
    assert mask("req-0673dd71-34c5-4fbb-86c4-40623fbe45b4 digest a489c868f0c37da9") == "req-<#> digest <#>"
    assert mask("HikariPool-1 exec-12 v2 http/1.1") == "HikariPool-1 exec-12 v2 http/<#>"
    assert mask("proxy.example.net:5070 open") == "<#> open"
    assert mask("  two  spaces kept ") == "  two  spaces kept "


def _mask_each_token(message: str) -> str:
    """The mask by definition: the variable pattern run over each space-separated token."""
    return " ".join(_VARIABLE.sub(_MASK, token) for token in message.split(" "))


# Pieces of values (digits, hex, 0x), the separators the pattern looks at, non-ASCII letters and
# digits and a lone surrogate, joined at random.
_PIECES = ["0x", "0X", "1x", "ff", "7", "42", "0", "9e", ".", ":", "-", "+", ",", "=", "/", "_", "[", "]"]
_PIECES += [" ", "\t", "a", "g", "Z", "é", "٣", "用", "\ud800"]
_MESSAGES = st.lists(st.sampled_from(_PIECES), max_size=24).map("".join)


@given(st.lists(_MESSAGES, min_size=1, max_size=6), st.randoms())
def test_the_memoised_mask_equals_the_pattern_run_over_each_token(messages: list[str], rng: Random) -> None:
    """Messages that differ only in their digits share a memoised shape; each must still get its own mask."""
    for message in messages:
        renumbered = "".join(rng.choice("0123456789") if ch.isdigit() and ch.isascii() else ch for ch in message)
        assert mask(message) == _mask_each_token(message)
        assert mask(renumbered) == _mask_each_token(renumbered)


def test_lines_differing_only_in_numbers_and_ids_share_a_template() -> None:
    miner = TemplateMiner()
    ids = {
        miner.add(HIKARI.format(ms=ms, t=t, a=a, w=w))
        for ms, t, a, w in [(30000, 10, 10, 3), (5300, 8, 8, 41), (120, 1, 1, 0)]
    }
    assert len(ids) == 1
    (template_id,) = ids
    assert miner.template(template_id) == (
        "HikariPool-1 - Connection is not available, request timed out after <*>ms "
        "(total=<*>, active=<*>, idle=<*>, waiting=<*>)"
    )
    other = miner.add("order 42 created for user 7")
    assert other != template_id
    assert miner.add("order 43 created for user 9") == other
    assert miner.templates() == {template_id: miner.template(template_id), other: "order <*> created for user <*>"}


def test_different_words_make_different_templates() -> None:
    miner = TemplateMiner()
    link = {miner.add("Link error"), miner.add("Link  error")}
    ok = {miner.add("Link ok")}
    assert len(link) == 1 and len(ok) == 1 and link != ok


def test_a_masked_prefix_alone_does_not_merge_messages() -> None:
    miner = TemplateMiner()
    uuid = "b9000564-fe1a-409b-b8cc-1e88b294cd1d"
    assert miner.add(f"[instance: {uuid}] Claim successful") != miner.add(f"[instance: {uuid}] Creating image")


def test_a_template_widens_where_a_word_varies() -> None:
    miner = TemplateMiner()
    first = miner.add("session opened for user root by uid 0 on tty pts0 from host alpha today")
    assert miner.add("session opened for user bob by uid 0 on tty pts0 from host alpha today") == first
    assert miner.template(first) == "session opened for user <*> by uid <*> on tty pts0 from host alpha today"


def test_ids_are_stable_across_save_and_restore() -> None:
    messages = [HIKARI.format(ms=i * 7, t=i, a=i, w=i) for i in range(20)]
    messages += [f"user u{i} logged in from 10.0.{i}.1" for i in range(20)]
    messages += [f"GET /api/orders/{i} 200 in {i}ms" for i in range(20)]
    miner = TemplateMiner()
    before = [miner.add(m) for m in messages]
    restored = TemplateMiner(miner.state())
    assert restored.templates() == miner.templates()
    assert [restored.add(m) for m in messages] == before
    # new shapes after a restore get new ids, and messages seen before keep theirs in both miners
    fresh = "cache evicted 12 keys in 3ms"
    assert restored.add(fresh) == miner.add(fresh) not in before
    again = TemplateMiner(TemplateMiner(restored.state()).state())
    assert [again.add(m) for m in [*messages, fresh]] == [*before, restored.add(fresh)]


def test_restore_without_the_memo_still_finds_the_templates() -> None:
    miner = TemplateMiner()
    ids = [miner.add(f"payment {i} settled amount={i}.50 channel=card") for i in range(5)]
    restored = TemplateMiner(miner.state())
    restored._memo.clear()  # a shape the saved memo no longer holds goes through drain's tree
    assert restored.add("payment 99 settled amount=7.25 channel=card") == ids[0]


def test_an_unknown_template_id_and_a_bad_state_are_errors() -> None:
    miner = TemplateMiner()
    with pytest.raises(KeyError):
        miner.template(99)
    with pytest.raises(ValueError, match="unusable template state"):
        TemplateMiner(b"not a state")


def test_mine_counts_templates_most_first_with_their_first_example() -> None:
    messages = [
        "disk /dev/sda1 at 91% full",
        "order 1 created",
        "order 2 created",
        "disk /dev/sda1 at 93% full",
        "order 3 created",
        "shutting down",
    ]
    result = mine(messages)
    assert result == [
        TemplateCount(result[0].template_id, "order <*> created", 3, 1),
        TemplateCount(result[1].template_id, "disk /dev/sda1 at <*>% full", 2, 0),
        TemplateCount(result[2].template_id, "shutting down", 1, 5),
    ]
    assert mine([]) == []


@given(st.lists(st.text(max_size=60), max_size=40))
def test_any_messages_get_an_id_that_repeats_and_survives_a_restore(messages: list[str]) -> None:
    miner = TemplateMiner()
    ids = [miner.add(m) for m in messages]
    assert [miner.add(m) for m in messages] == ids
    restored = TemplateMiner(miner.state())
    assert [restored.add(m) for m in messages] == ids
    assert sum(t.count for t in mine(messages)) == len(messages)
