"""The project stands alone: what the code and docs cite is inside the repository, and its
licence is one every runtime dependency allows.

Every ``docs/spec §N`` (or bare ``§N``) names a section anchored in ``docs/spec/``, every
``docs/DESIGN.md §N`` a section of the brief, and nothing points at a checkout next to this one.
"""

from __future__ import annotations

import importlib.metadata
import re
import runpy
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from typer.testing import CliRunner

import veridiag
from veridiag.cli.app import app

ROOT = Path(__file__).resolve().parents[1]
SPEC_DIR = ROOT / "docs" / "spec"
SPEC_INDEX = SPEC_DIR / "README.md"
DESIGN = ROOT / "docs" / "DESIGN.md"
LICENCE_SCRIPT = ROOT / "scripts" / "licences.py"

#: What is scanned: the code, the tests and every document that cites the spec.
SCANNED = ("src", "tests", "docs", "schemas", "README.md", "ARCHITECTURE.md", "CHANGELOG.md", "pyproject.toml")
TEXT_SUFFIXES = frozenset({".py", ".md", ".yaml", ".yml", ".toml", ".json", ".html", ".txt", ".cfg"})

SECTION = r"\d+(?:\.\d+)*"
#: ``§19.2``, ``§2–§8``, ``§16–17``; preceded by ``DESIGN`` / ``docs/DESIGN.md`` it is the brief's.
SECTION_REFERENCE = re.compile(
    rf"(?P<design>\bDESIGN(?:\.md)?\s*)?§(?P<first>{SECTION})(?:\s*[–-]\s*§?(?P<last>{SECTION}))?"
)
#: ``spec 19.2`` without the section sign still names a section.
BARE_SPEC_REFERENCE = re.compile(rf"\bspec\s+(?P<first>{SECTION})\b")
#: Paths into a checkout beside this repository (where the spec used to live).
OUTSIDE_PATH = re.compile(r"\.\./shared\b|\bshared/spec\b|/work/shared\b")

SPEC_ANCHOR = re.compile(r'<a id="s(?P<section>[^"]+)"></a>')
DESIGN_HEADING = re.compile(r"^## (?P<section>\d+)\. ", re.MULTILINE)
INDEX_LINK = re.compile(r"\]\((?P<file>[\w.-]+\.md)#s(?P<section>[^)]+)\)")
INDEX_ROW = re.compile(r"^\| \[(?P<section>[\d.]+)\]\(.*\| (?P<modules>[^|]*) \|$", re.MULTILINE)
MODULE_PATH = re.compile(r"`(?P<path>[\w./-]+(?:/|\.py|\.yaml|\.md|\.toml))`")


@dataclass(frozen=True)
class Reference:
    """One citation of a section: where it is written and which document it names."""

    where: str
    document: str  # "spec" or "design"
    section: str


def spec_sections() -> set[str]:
    """Every anchored section of the spec (``0.6-in-scope`` and ``21-stage-3`` included)."""
    return {
        match["section"] for path in SPEC_DIR.glob("*.md") for match in SPEC_ANCHOR.finditer(path.read_text("utf-8"))
    }


def design_sections() -> set[str]:
    return {match["section"] for match in DESIGN_HEADING.finditer(DESIGN.read_text("utf-8"))}


def references_in(text: str, where: str) -> list[Reference]:
    """The section references in ``text``; a range names both of its ends."""
    found: list[Reference] = []
    for number, line in enumerate(text.splitlines(), start=1):
        place = f"{where}:{number}"
        for match in SECTION_REFERENCE.finditer(line):
            document = "design" if match["design"] else "spec"
            found.extend(Reference(place, document, match[key]) for key in ("first", "last") if match[key])
        found.extend(Reference(place, "spec", match["first"]) for match in BARE_SPEC_REFERENCE.finditer(line))
    return found


def scanned_files() -> list[Path]:
    this_file = Path(__file__).resolve()
    files: list[Path] = []
    for name in SCANNED:
        path = ROOT / name
        candidates = [path] if path.is_file() else sorted(path.rglob("*"))
        files.extend(
            file
            for file in candidates
            if file.is_file()
            and file.suffix in TEXT_SUFFIXES
            and "__pycache__" not in file.parts
            and file.resolve() != this_file
        )
    return files


def unresolved(references: list[Reference], spec: set[str], design: set[str]) -> list[Reference]:
    return [ref for ref in references if ref.section not in (spec if ref.document == "spec" else design)]


def test_scanner_reads_sections_ranges_and_documents() -> None:
    text = "see docs/spec §19.2.1 and §2–§8,\nDESIGN §4; docs/DESIGN.md §16–17 (spec 0.6)."
    assert references_in(text, "x") == [
        Reference("x:1", "spec", "19.2.1"),
        Reference("x:1", "spec", "2"),
        Reference("x:1", "spec", "8"),
        Reference("x:2", "design", "4"),
        Reference("x:2", "design", "16"),
        Reference("x:2", "design", "17"),
        Reference("x:2", "spec", "0.6"),
    ]


def test_scanner_flags_a_section_that_does_not_exist() -> None:
    references = references_in("docs/spec §19.9 and docs/DESIGN.md §4 and §26", "x")
    missing = unresolved(references, spec={"19.2"}, design={"4"})
    assert [ref.section for ref in missing] == ["19.9", "26"]


def test_the_spec_has_its_numbered_sections() -> None:
    sections = spec_sections()
    for expected in ("0", "0.4", "2", "10.4", "13.1.1", "16.1.1", "17-reject", "19.2.1", "21-stage-5", "25"):
        assert expected in sections
    assert {str(number) for number in range(26)} <= sections


def test_every_section_reference_resolves_inside_the_repository() -> None:
    spec, design = spec_sections(), design_sections()
    references = [ref for file in scanned_files() for ref in references_in(file.read_text("utf-8"), str(file))]
    assert len(references) > 50  # the scan reached the code and docs that cite the spec
    missing = unresolved(references, spec, design)
    assert not missing, "\n".join(f"{ref.where}: {ref.document} §{ref.section} does not exist" for ref in missing)


def test_nothing_points_outside_the_repository() -> None:
    offending = [
        f"{file}:{number}: {line.strip()}"
        for file in scanned_files()
        for number, line in enumerate(file.read_text("utf-8").splitlines(), start=1)
        if OUTSIDE_PATH.search(line)
    ]
    assert not offending, "\n".join(offending)


@pytest.mark.parametrize("outside", ["../shared/spec", "see shared/spec/000.txt", "/work/shared/DESIGN.md"])
def test_outside_paths_are_recognised(outside: str) -> None:
    assert OUTSIDE_PATH.search(outside)


def test_the_index_covers_every_section_and_links_only_to_anchors() -> None:
    index = SPEC_INDEX.read_text("utf-8")
    sections = spec_sections()
    linked = {match["section"] for match in INDEX_LINK.finditer(index)}
    assert linked == sections
    for match in INDEX_LINK.finditer(index):
        assert (SPEC_DIR / match["file"]).is_file()


def test_the_index_names_modules_that_exist() -> None:
    rows = list(INDEX_ROW.finditer(SPEC_INDEX.read_text("utf-8")))
    assert len(rows) > 60
    for row in rows:
        for match in MODULE_PATH.finditer(row["modules"]):
            path = match["path"]
            base = ROOT if path.startswith(("tests/", "evals/", "pyproject")) else ROOT / "src" / "veridiag"
            assert (base / path).exists(), f"§{row['section']}: {path}"


@pytest.mark.parametrize(
    ("licence", "kind"),
    [
        ("MIT", "permissive"),
        ("Apache-2.0 OR BSD-2-Clause", "permissive"),
        ("MIT OR GPL-2.0-only", "permissive"),
        ("MPL-2.0", "weak copyleft"),
        ("GNU Lesser General Public License v3 (LGPLv3)", "weak copyleft"),
        ("GPL-3.0-or-later", "STRONG COPYLEFT"),
        ("Apache-2.0 AND AGPL-3.0-only", "STRONG COPYLEFT"),
        ("(MIT OR Apache-2.0) AND GPL-2.0-only", "STRONG COPYLEFT"),
        ("", "UNKNOWN"),
    ],
)
def test_licences_are_classed_by_what_they_oblige(licence: str, kind: str) -> None:
    classify = runpy.run_path(str(LICENCE_SCRIPT))["classify"]
    assert classify(licence) == kind


def test_no_runtime_dependency_is_strong_copyleft_and_every_one_is_listed() -> None:
    run = subprocess.run([sys.executable, str(LICENCE_SCRIPT)], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    listed = {line.split()[0] for line in run.stdout.splitlines()}
    with (ROOT / "pyproject.toml").open("rb") as file:
        declared = tomllib.load(file)["project"]["dependencies"]
    assert {canonicalize_name(Requirement(line).name) for line in declared} <= listed


def test_the_licence_file_is_the_declared_licence() -> None:
    with (ROOT / "pyproject.toml").open("rb") as file:
        declared = tomllib.load(file)["project"]["license"]
    text = (ROOT / "LICENSE").read_text("utf-8")
    assert declared == "Apache-2.0"
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text


def declared_version() -> str:
    with (ROOT / "pyproject.toml").open("rb") as file:
        return str(tomllib.load(file)["project"]["version"])


def test_version_prints_the_package_metadata_written_in_pyproject() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.strip() == importlib.metadata.version("veridiag") == declared_version()


def test_the_package_version_is_derived_from_the_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.metadata, "version", lambda name: f"9.9.9+{name}")
    try:
        assert importlib.reload(veridiag).__version__ == "9.9.9+veridiag"
    finally:
        monkeypatch.undo()
        importlib.reload(veridiag)
    assert veridiag.__version__ == declared_version()
