"""The Gatekeeper benchmark builds its inputs for any seed and size, and times what it says."""

from __future__ import annotations

import random

import pytest

from veridiag.bench import gatekeeper as bench


def test_a_one_word_excerpt_is_changed_not_crashed_on() -> None:
    # Seed 7 at 256 KB draws a one-word excerpt to change: it raised ValueError (empty range).
    scenario = bench.build_scenario(size=262_144, seed=7)
    assert scenario.kinds.count("changed") == 10


@pytest.mark.parametrize("word", ["timeout", "cost=5300ms", "order=123456"])
def test_change_one_changes_the_only_word(word: str) -> None:
    for seed in range(20):
        changed = bench._change_one(random.Random(seed), word)
        assert changed != word and " " not in changed


def test_change_one_keeps_the_first_of_several_words() -> None:
    excerpt = "gateway request timeout cost=5300ms"
    for seed in range(50):
        changed = bench._change_one(random.Random(seed), excerpt)
        assert changed.split(" ")[0] == "gateway" and changed != excerpt


def test_each_seed_is_its_own_session_with_its_own_data() -> None:
    first, second = bench.build_scenario(seed=7), bench.build_scenario(seed=11)
    assert first.session_id != second.session_id
    assert first.records[0].output != second.records[0].output
