"""The text layer: word lists are data (checked when read, changeable without Python), and a call,
a time and a language are written and told apart one way everywhere."""

from __future__ import annotations

import json
import os
import re
import tomllib
from datetime import UTC, datetime, timedelta, timezone
from fnmatch import fnmatch
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from tests.builders import verifier_payload
from veridiag.agents.offline.verifier import OfflineVerifier, VerifierWording
from veridiag.contracts import InMemoryInvocations, InvocationRecord
from veridiag.contracts.composer import ComposerInput, ComposerOutput
from veridiag.contracts.json import JsonObject
from veridiag.ingest.columns import ColumnWords
from veridiag.ingest.logformats._base import FormatWords
from veridiag.pipeline.composer_guard import guard_composed
from veridiag.pipeline.composer_input import ComposerWording
from veridiag.text.cjk import detect_lang, has_cjk
from veridiag.text.entities import EntityWords, extract_entities
from veridiag.text.render import invocation_context, invocation_json, iso
from veridiag.text.search import SearchWords
from veridiag.text.tokens import TokenWords
from veridiag.text.units import UnitWords
from veridiag.text.when import WhenWords
from veridiag.text.wordfiles import WordFileError, read_words
from veridiag.text.yaml_files import parse_yaml

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "veridiag"
#: Every bundled word file and the model it is read with.
WORD_FILES: dict[str, type[BaseModel]] = {
    "text/units.yaml": UnitWords,
    "text/entities.yaml": EntityWords,
    "text/tokens.yaml": TokenWords,
    "text/search.yaml": SearchWords,
    "text/when.yaml": WhenWords,
    "pipeline/composer.yaml": ComposerWording,
    "agents/offline/verifier.yaml": VerifierWording,
    "ingest/logformats/words.yaml": FormatWords,
    "ingest/columns.yaml": ColumnWords,
}


def _bundled(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((PACKAGE / name).read_text(encoding="utf-8"))
    return loaded


def _write(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


# -- word files are data ---------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(WORD_FILES))
def test_every_bundled_word_file_reads_against_its_model(name: str) -> None:
    read_words(PACKAGE / name, WORD_FILES[name])


def test_every_bundled_yaml_file_ships_with_the_package() -> None:
    """A data file the wheel leaves out fails only once installed: every YAML file under the
    package must match a package-data pattern."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["veridiag"]
    files = [path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.yaml")]
    assert set(WORD_FILES) <= set(files)
    assert [f for f in files if not any(fnmatch(f, pattern) for pattern in patterns)] == []


def test_a_hedge_word_added_in_data_changes_what_the_composer_guard_accepts(tmp_path: Path) -> None:
    gap = "payment-service 的连接池已经耗尽"
    composer_input = ComposerInput(original_query="支付为什么失败", lang="zh", verdict="PASS", missing_info=[gap])
    answer = ComposerOutput(answer_summary="s", user_facing_answer=f"大概率 {gap}。")
    bundled = guard_composed(answer, composer_input)
    assert any("unconfirmed statement is written as fact" in v for v in bundled.violations)

    data = _bundled("pipeline/composer.yaml")
    data["patterns"]["hedge"].append("大概率")
    wording = read_words(_write(tmp_path / "composer.yaml", data), ComposerWording)
    assert guard_composed(answer, composer_input, patterns=wording.patterns).passed


def test_an_absolutist_phrase_added_in_data_changes_how_the_offline_verifier_labels(tmp_path: Path) -> None:
    hypothesis = {"hypothesis_text": "The pool is exhausted for sure", "needed_evidence": ["pool metrics"]}
    payload = verifier_payload({"claims": [], "hypotheses": [hypothesis]})

    def label(verifier: OfflineVerifier) -> str:
        return str(json.loads(verifier.verify(payload).text or "")["hypothesis_checks"][0]["verification"])

    assert label(OfflineVerifier(InMemoryInvocations([]))) == "reasonable_hypothesis"
    data = _bundled("agents/offline/verifier.yaml")
    data["absolutist"].append(r"for\s+sure")
    wording = read_words(_write(tmp_path / "verifier.yaml", data), VerifierWording)
    assert label(OfflineVerifier(InMemoryInvocations([]), wording=wording)) == "overstated_as_fact"


@pytest.mark.parametrize(
    ("name", "edit", "says"),
    [
        ("pipeline/composer.yaml", lambda d: d["patterns"]["hedge"].append("可能("), "patterns.hedge"),
        ("pipeline/composer.yaml", lambda d: d["patterns"].update(hedges=["x"]), "patterns.hedges"),
        ("pipeline/composer.yaml", lambda d: d["gaps"]["en"].pop("withheld"), "gaps.en.withheld"),
        ("agents/offline/verifier.yaml", lambda d: d.update(negation=[]), "negation"),
        ("text/tokens.yaml", lambda d: d["stopwords"]["en"].append(True), "stopwords.en."),
        ("text/units.yaml", lambda d: d["units"][0]["spellings"].append("s"), "belongs to more than one unit"),
        ("text/units.yaml", lambda d: d["units"][0]["spellings"].append("MS"), "units.0.spellings"),
        ("ingest/logformats/words.yaml", lambda d: d["level_position"].append("LOUD"), "LOUD"),
        ("ingest/columns.yaml", lambda d: d["pod"].append("Service_Name"), "already a service name"),
        ("text/when.yaml", lambda d: d["zones"].update({"火星时间": "Mars/Olympus"}), "Mars/Olympus"),
    ],
)
def test_a_malformed_word_file_fails_naming_the_file_and_the_key(
    tmp_path: Path, name: str, edit: Any, says: str
) -> None:
    data = _bundled(name)
    edit(data)
    path = _write(tmp_path / Path(name).name, data)
    with pytest.raises(WordFileError) as raised:
        read_words(path, WORD_FILES[name])
    assert re.match(rf"{re.escape(str(path))}:\d+: ", str(raised.value)), "the file and the line come first"
    assert says in str(raised.value)


def test_a_word_file_that_is_no_yaml_fails_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "tokens.yaml"
    path.write_text("stopwords:\n  zh: [的, 了\n  en: [a]\n", encoding="utf-8")
    with pytest.raises(WordFileError, match=rf"^{path}:\d+: invalid YAML"):
        read_words(path, TokenWords)


def _node_lines(node: yaml.Node | None) -> list[tuple[str, int, int]]:
    if node is None:
        return []
    found = [(node.tag, node.start_mark.line, node.start_mark.column)]
    children = [part for pair in node.value for part in pair] if isinstance(node, yaml.MappingNode) else node.value
    for child in children if isinstance(node, yaml.CollectionNode) else []:
        found += _node_lines(child)
    return found


#: Folders of other programs' files, never walked: the venv, git's, and what builds write
#: (build/ holds the image's Debian root while .ci/run builds it beside the tests).
NOT_THE_PROJECTS = frozenset({".venv", ".git", "build", "dist"})


def project_yaml(root: Path) -> list[Path]:
    """The project's YAML files, found without entering a folder of NOT_THE_PROJECTS: a tree
    another process writes meanwhile would give each pytest worker other test ids."""
    found: list[Path] = []
    for folder, folders, files in os.walk(root):
        folders[:] = [name for name in folders if name not in NOT_THE_PROJECTS]
        if "Chart.yaml" in files:  # a Helm chart's templates are Go templates that render YAML
            folders[:] = [name for name in folders if name != "templates"]
        found += (Path(folder, name) for name in files if fnmatch(name, "*.y*ml"))
    return sorted(found)


def test_yaml_files_are_the_projects_own(tmp_path: Path) -> None:
    places = ("src/words.yaml", "deploy/k.yml", "build/image/rootfs/x.yaml", "a/.venv/y.yaml", "dist/z.yml")
    for place in (*places, "deploy/chart/Chart.yaml", "deploy/chart/templates/t.yaml", "deploy/templates/u.yaml"):
        (tmp_path / place).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / place).write_text("a: 1\n")
    assert project_yaml(tmp_path) == [
        tmp_path / "deploy/chart/Chart.yaml",
        tmp_path / "deploy/k.yml",
        tmp_path / "deploy/templates/u.yaml",
        tmp_path / "src/words.yaml",
    ]


@pytest.mark.parametrize("path", project_yaml(ROOT), ids=str)
def test_yaml_is_read_as_the_pure_python_parser_reads_it(path: Path) -> None:
    """libyaml parses once where two pure-Python parses were: same data, same line of every node."""
    text = path.read_text(encoding="utf-8")
    data, node = parse_yaml(text, str(path), ValueError)
    assert data == yaml.safe_load(text)
    assert _node_lines(node) == _node_lines(yaml.compose(text))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: [\n", "x.yaml:2: invalid YAML: expected the node content, but found '<stream end>'"),
        ("a: b\n c: d\n", "x.yaml:2: invalid YAML: mapping values are not allowed here"),
        ("---\na: 1\n---\nb: 2\n", "x.yaml:3: invalid YAML: but found another document"),
    ],
)
def test_invalid_yaml_is_worded_as_the_pure_python_parser_words_it(text: str, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        parse_yaml(text, "x.yaml", ValueError)
    assert str(raised.value) == message


def test_a_yes_or_no_left_unquoted_is_caught_not_read_as_a_boolean(tmp_path: Path) -> None:
    """YAML 1.1 reads a bare ``no`` or ``on`` as a boolean: a stop word list must say so, not lose it."""
    path = tmp_path / "tokens.yaml"
    path.write_text("stopwords:\n  zh: [的]\n  en: [a, on, the]\n", encoding="utf-8")
    with pytest.raises(WordFileError, match=r"stopwords\.en\.1: Input should be a valid string"):
        read_words(path, TokenWords)


def test_the_bundled_files_read_the_same_through_the_package_resources() -> None:
    """The owners read through ``importlib.resources`` (a wheel, a zip): the same bytes as the source tree."""
    for name in WORD_FILES:
        package, _, file = f"veridiag/{name}".rpartition("/")
        shipped = resources.files(package.replace("/", ".")).joinpath(file).read_text(encoding="utf-8")
        assert shipped == (PACKAGE / name).read_text(encoding="utf-8")


# -- one definition each -----------------------------------------------------------------------


def test_han_extension_a_counts_as_chinese() -> None:
    assert has_cjk("㐀") and detect_lang("服务 down?") == "zh" and detect_lang("checkout slow") == "en"


def test_iso_writes_utc_whatever_zone_a_time_comes_in() -> None:
    moment = datetime(2026, 7, 7, 18, 0, tzinfo=timezone(timedelta(hours=8)))
    assert iso(moment) == "2026-07-07T10:00:00Z"
    assert iso(datetime(2026, 7, 7, 10, 0)) == iso(datetime(2026, 7, 7, 10, 0, tzinfo=UTC)) == "2026-07-07T10:00:00Z"


def test_an_invocation_context_is_one_spelling_whatever_the_key_order() -> None:
    def called(arguments: JsonObject) -> InvocationRecord:
        window: JsonObject = {"window": ["2026-07-07T10:00:00Z"]}
        return InvocationRecord(
            id=1, session_id="s", tool_name="query_logs", arguments=arguments, retrieval_details=window
        )

    one = invocation_context(called({"service": "payment-service", "query": "order 123"}))
    other = invocation_context(called({"query": "order 123", "service": "payment-service"}))
    assert one == other
    assert "2026-07-07T10:00:00Z" in one
    # A view that is no stored row may hold values that are no JSON: they are written as text.
    assert "2026-07-07 10:00:00+00:00" in invocation_json({"window": [datetime(2026, 7, 7, 10, tzinfo=UTC)]})
    assert [e.text for e in extract_entities(one) if e.kind == "service"] == ["payment-service"]
