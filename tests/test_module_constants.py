"""A module's constants are bound once: a second ``_EPISODE = …`` or ``_FROM_TO = …`` further down
a long rule module silently replaced the first, and every reader of the first crashed or, worse,
matched something else (twice in issue 27's checks, each time a rule's whole output lost)."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

_SRC = Path(__file__).resolve().parent.parent / "src" / "veridiag"


def _constants(tree: ast.Module) -> Counter[str]:
    names: Counter[str] = Counter()
    for node in tree.body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        for target in targets:
            if isinstance(target, ast.Name) and target.id.lstrip("_")[:1].isupper():
                names[target.id] += 1
    return names


def test_no_module_binds_a_constant_twice() -> None:
    twice = {
        str(path.relative_to(_SRC)): sorted(
            name for name, count in _constants(ast.parse(path.read_text("utf-8"))).items() if count > 1
        )
        for path in sorted(_SRC.rglob("*.py"))
    }
    assert not {path: names for path, names in twice.items() if names}


def test_the_check_sees_a_constant_bound_twice() -> None:
    assert _constants(ast.parse("_A = 1\nB: int = 2\n_A = 3\nx = 1\nx = 2\n")) == Counter({"_A": 2, "B": 1})
