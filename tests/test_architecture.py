"""ARCHITECTURE.md's invariants each name the check that holds them, and that check exists."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEST_REF = re.compile(r"`(test_\w+\.py)(?:::(\w+))?`")
CONTRACT_REF = re.compile(r'contracts? "([^"]+)"')


def _invariants() -> list[str]:
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text[text.index("## Invariants") : text.index("## Module map")]
    return [item for item in re.split(r"\n- ", section)[1:]]


def _contract_names() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return [c["name"] for c in config["tool"]["importlinter"]["contracts"]]


def test_every_invariant_says_never_and_names_a_check_that_exists() -> None:
    invariants = _invariants()
    assert len(invariants) >= 10
    contracts = _contract_names()
    for item in invariants:
        assert "never" in item.lower(), item[:80]
        tests = TEST_REF.findall(item)
        named = [" ".join(name.split()) for name in CONTRACT_REF.findall(item)]
        assert tests or named or "contracts" in item, f"no check named: {item[:80]}"
        for module, function in tests:
            path = ROOT / "tests" / module
            assert path.exists(), module
            assert not function or f"def {function}(" in path.read_text(encoding="utf-8"), f"{module}::{function}"
        for name in named:
            assert any(contract.startswith(name) for contract in contracts), f"no import-linter contract {name!r}"
