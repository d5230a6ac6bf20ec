"""Package re-exports that import a submodule only when one of its names is first used (PEP 562).

Importing ``veridiag.tools.factory`` runs ``veridiag/tools/__init__.py`` first: if that imported
the runner, and with it the store, every submodule would cost what the whole package costs, and
``veridiag --help`` what a diagnosis costs. A package keeps its public names (``from
veridiag.tools import ToolRunner`` still works) by listing where each lives; its
``TYPE_CHECKING`` imports give mypy the same names with their types.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, Sequence[str]]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``; ``exports`` maps a submodule (``.runner``) to
    the names the package re-exports from it."""
    home = {name: module for module, names in exports.items() for name in names}

    def attribute(name: str) -> Any:
        module = home.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)  # the next lookup is a plain attribute
        return value

    return attribute
