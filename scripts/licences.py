"""List the licence of every runtime dependency of veridiag and flag copyleft ones.

Usage: ``.venv/bin/python scripts/licences.py`` (reads the installed packages' metadata).

Covers the base install and the ``postgres``, ``anthropic`` and ``gemini`` extras, each with
everything they pull in; development tools are not shipped and not listed. Exit status 1 when a
package is under a strong copyleft licence (GPL, AGPL, SSPL, …), which would oblige veridiag
(Apache-2.0) to change licence, or names no licence we can read. Weak copyleft (LGPL, MPL, EPL)
is flagged but allowed: those libraries are used unmodified, as separate packages.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from importlib import metadata

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT_PACKAGE = "veridiag"
EXTRAS = ("postgres", "anthropic", "gemini")

PERMISSIVE, WEAK, STRONG, UNKNOWN = "permissive", "weak copyleft", "STRONG COPYLEFT", "UNKNOWN"
#: How binding each class is, for combining ``AND`` / ``OR`` expressions.
RANK = {PERMISSIVE: 0, WEAK: 1, UNKNOWN: 2, STRONG: 3}
WEAK_COPYLEFT = re.compile(r"\bLGPL|LESSER GENERAL|LIBRARY GENERAL|\bMPL\b|MOZILLA|\bEPL\b|ECLIPSE|\bCDDL")
STRONG_COPYLEFT = re.compile(r"\bA?GPL|AFFERO|GENERAL PUBLIC|\bSSPL|\bEUPL|\bOSL\b|CC-BY-SA")
#: A licence field this long is the licence's full text; its first line names it.
MAX_NAME_LENGTH = 80


@dataclass(frozen=True)
class Dependency:
    name: str
    version: str
    group: str  # "base" or the extra that brings it in
    licence: str
    kind: str


def classify(licence: str) -> str:
    """One licence name or SPDX expression → its class.

    ``OR`` takes the freest choice and ``AND`` the most binding term (``AND`` binds tighter, as in
    SPDX). A parenthesised expression is judged by its most binding term: over-flagging is safe.
    """
    if not licence.strip():
        return UNKNOWN
    if "(" in licence:
        return _classify_all(re.sub(r"\s+OR\s+", " AND ", licence.replace("(", " ").replace(")", " ")))
    choices = re.split(r"\s+OR\s+", licence)
    return min((_classify_all(choice) for choice in choices), key=RANK.__getitem__)


def _classify_all(expression: str) -> str:
    terms = [term.upper() for term in re.split(r"\s+AND\s+", expression) if term.strip()]
    return max((_classify_one(term) for term in terms), key=RANK.__getitem__, default=UNKNOWN)


def _classify_one(term: str) -> str:
    if WEAK_COPYLEFT.search(term):
        return WEAK
    if STRONG_COPYLEFT.search(term):
        return STRONG
    return PERMISSIVE if term.strip() not in ("", "UNKNOWN") else UNKNOWN


def licence_of(distribution: metadata.Distribution) -> str:
    """SPDX ``License-Expression``, else the ``License`` field, else the trove classifiers."""
    fields = distribution.metadata
    expression = _first(fields, "License-Expression")
    if expression:
        return expression
    text = _first(fields, "License")
    if text and text.upper() != "UNKNOWN":
        return text if len(text) <= MAX_NAME_LENGTH else text.splitlines()[0].strip()
    classifiers = [c.split(" :: ")[-1] for c in fields.get_all("Classifier") or [] if c.startswith("License ::")]
    return " OR ".join(classifiers)


def _first(fields: metadata.PackageMetadata, name: str) -> str:
    values = fields.get_all(name) or []
    return str(values[0]).strip() if values else ""


def closure(root: str, extras: frozenset[str]) -> dict[str, metadata.Distribution]:
    """Every installed distribution ``root[extras]`` needs on this platform, root excluded."""
    found: dict[str, metadata.Distribution] = {}
    visited: set[tuple[str, frozenset[str]]] = set()
    pending = [(root, extras)]
    while pending:
        name, wanted = pending.pop()
        key = canonicalize_name(name)
        if (key, wanted) in visited:
            continue
        visited.add((key, wanted))
        try:
            distribution = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # an extra that is not installed here: nothing of it ships with this install
        if key != canonicalize_name(root):
            found[key] = distribution
        for line in distribution.requires or []:
            requirement = Requirement(line)
            active = requirement.marker is None or any(
                requirement.marker.evaluate({"extra": extra}) for extra in (wanted or {""})
            )
            if active:
                pending.append((requirement.name, frozenset(requirement.extras)))
    return found


def dependencies() -> list[Dependency]:
    """The base install's packages, then those each extra adds."""
    groups = {"base": closure(ROOT_PACKAGE, frozenset())}
    for extra in EXTRAS:
        groups[extra] = closure(ROOT_PACKAGE, frozenset({extra}))
    listed: dict[str, Dependency] = {}
    for group, found in groups.items():
        for key, distribution in sorted(found.items()):
            if key not in listed:
                licence = licence_of(distribution)
                listed[key] = Dependency(key, distribution.version, group, licence, classify(licence))
    return list(listed.values())


def main() -> int:
    rows = dependencies()
    name_width = max(len(row.name) for row in rows)
    version_width = max(len(row.version) for row in rows)
    for row in rows:
        columns = (row.name.ljust(name_width), row.version.ljust(version_width), row.group.ljust(9), row.kind.ljust(15))
        print("  ".join((*columns, row.licence)))
    blocking = [row for row in rows if row.kind in (STRONG, UNKNOWN)]
    for row in blocking:
        print(f"error: {row.name} ({row.group}) is {row.kind}: {row.licence or 'no licence metadata'}", file=sys.stderr)
    return 1 if blocking else 0


if __name__ == "__main__":
    sys.exit(main())
