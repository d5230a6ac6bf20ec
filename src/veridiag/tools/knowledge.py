"""Runbooks as Markdown with YAML front matter, searchable with SQLite FTS5 + bm25.

Bundled runbooks ship in ``tools/runbooks``; a user folder adds or overrides by id.
Text is segmented with rjieba before indexing, so 2-character Chinese words match.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import yaml

from veridiag.text.search import fts_query
from veridiag.text.tokens import segment

_FRONT = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.DOTALL)

_FTS_TABLE = "CREATE VIRTUAL TABLE IF NOT EXISTS kb_fts USING fts5(title, symptoms, body, content='')"
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS kb_doc(
    rowid INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, title TEXT NOT NULL, services TEXT NOT NULL,
    symptoms TEXT NOT NULL, body TEXT NOT NULL, origin TEXT NOT NULL);
{_FTS_TABLE};
"""


class RunbookError(ValueError):
    """A runbook file that cannot be indexed, naming the file."""


@dataclass(frozen=True)
class Runbook:
    id: str
    title: str
    services: tuple[str, ...]
    symptoms: tuple[str, ...]
    body: str
    origin: str


def parse_runbook(text: str, origin: str) -> Runbook:
    match = _FRONT.match(text)
    if not match:
        raise RunbookError(f"{origin}: missing YAML front matter (--- ... ---)")
    try:
        meta = yaml.safe_load(match.group(1)) or {}
    except yaml.YAMLError as exc:
        raise RunbookError(f"{origin}: invalid front matter: {exc}") from None
    if not isinstance(meta, dict) or not meta.get("id") or not meta.get("title"):
        raise RunbookError(f"{origin}: front matter needs 'id' and 'title'")

    def strings(key: str) -> tuple[str, ...]:
        value = meta.get(key) or []
        return tuple(str(v) for v in (value if isinstance(value, list) else [value]))

    return Runbook(
        id=str(meta["id"]),
        title=str(meta["title"]),
        services=strings("services"),
        symptoms=strings("symptoms"),
        body=text[match.end() :].strip(),
        origin=origin,
    )


_ITEM = re.compile(r"^\s*(?:\d+\.|[-*])\s+(.*)$")


def sections(body: str) -> dict[str, list[str]]:
    """Each ``## heading`` of a runbook with its numbered or bulleted items, in order."""
    found: dict[str, list[str]] = {}
    heading: str | None = None
    for line in body.split("\n"):
        if line.startswith("## "):
            heading = line[3:].strip()
            found.setdefault(heading, [])
            continue
        item = _ITEM.match(line)
        if heading is not None and item:
            found[heading].append(item.group(1).strip())
    return found


def bundled_runbooks() -> Iterator[Runbook]:
    folder = resources.files("veridiag.tools").joinpath("runbooks")
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".md"):
            yield parse_runbook(entry.read_text(encoding="utf-8"), f"bundled:{entry.name}")


def sources_fingerprint(folders: Sequence[Path] = ()) -> str:
    """Changes whenever the runbooks an index would hold change: the bundled files' text
    (a new release) and the other folders' files (name, size, modification time — stat
    only, so a folder of thousands costs no parsing at start-up)."""
    digest = hashlib.sha256()
    bundled = resources.files("veridiag.tools").joinpath("runbooks")
    for entry in sorted(bundled.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".md"):
            digest.update(entry.name.encode() + b"\0" + entry.read_bytes() + b"\0")
    for folder in folders:
        if not folder.exists():
            continue
        digest.update(f"{folder}\0".encode())
        for path in sorted(folder.rglob("*.md")):
            stat = path.stat()
            digest.update(f"{path.relative_to(folder)}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    return digest.hexdigest()


def folder_runbooks(folder: Path, skipped: list[str] | None = None) -> Iterator[Runbook]:
    """The user's runbooks. A broken one raises ``RunbookError`` — or, when ``skipped`` is
    given, is left out and its error appended there (start-up must not fail on a typo)."""
    for path in sorted(folder.rglob("*.md")):
        try:
            runbook = _read_runbook(path)
        except RunbookError as exc:
            if skipped is None:
                raise
            skipped.append(str(exc))
            continue
        yield runbook


def _read_runbook(path: Path) -> Runbook:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise RunbookError(f"{path}: not UTF-8") from None
    return parse_runbook(text, str(path))


def index_runbooks(conn: sqlite3.Connection, runbooks: Iterable[Runbook]) -> int:
    """Replace the index with ``runbooks`` (later ids override earlier ones), in one transaction
    (the caller's, if one is open; committed here): a reader, in this process or another, sees
    the old index or the new one, never an empty or missing table. ``SCHEMA`` has run on
    ``conn``'s file (``executescript`` would commit midway, hence single statements here)."""
    by_id = {runbook.id: runbook for runbook in runbooks}
    conn.execute("DELETE FROM kb_doc")
    conn.execute("DROP TABLE IF EXISTS kb_fts")  # re-created: a new release's columns take effect
    conn.execute(_FTS_TABLE)
    for rowid, runbook in enumerate(by_id.values(), start=1):
        conn.execute(
            "INSERT INTO kb_doc(rowid, id, title, services, symptoms, body, origin) VALUES (?,?,?,?,?,?,?)",
            (
                rowid,
                runbook.id,
                runbook.title,
                json.dumps(runbook.services),
                json.dumps(runbook.symptoms, ensure_ascii=False),
                runbook.body,
                runbook.origin,
            ),
        )
        conn.execute(
            "INSERT INTO kb_fts(rowid, title, symptoms, body) VALUES (?,?,?,?)",
            (rowid, segment(runbook.title), segment(" ".join(runbook.symptoms)), segment(runbook.body)),
        )
    conn.commit()
    return len(by_id)


@dataclass(frozen=True)
class Hit:
    runbook: Runbook
    score: float


def search(conn: sqlite3.Connection, query: str, *, service: str | None = None, limit: int = 3) -> list[Hit]:
    """Best runbooks for ``query`` by bm25 (title and symptoms weigh more than body)."""
    match = fts_query(query, mode="or")
    if match is None:
        return []
    rows = conn.execute(
        "SELECT d.id, d.title, d.services, d.symptoms, d.body, d.origin, bm25(kb_fts, 8.0, 4.0, 1.0) AS rank "
        "FROM kb_fts JOIN kb_doc d ON d.rowid = kb_fts.rowid WHERE kb_fts MATCH ? ORDER BY rank LIMIT ?",
        (match, limit * 4 if service else limit),
    ).fetchall()
    hits = []
    for doc_id, title, services, symptoms, body, origin, rank in rows:
        runbook = Runbook(doc_id, title, tuple(json.loads(services)), tuple(json.loads(symptoms)), body, origin)
        if service and runbook.services and service not in runbook.services:
            continue
        hits.append(Hit(runbook, round(-float(rank), 3)))
    return hits[:limit]


def shared_terms(query: str, runbook: Runbook) -> list[str]:
    """The query's words (2+ characters, letters or CJK) that occur in the runbook."""
    wanted = {w for w in segment(query).lower().split() if len(w) > 1 and not w.isdigit()}
    text = " ".join([runbook.title, *runbook.symptoms, runbook.body])
    present = set(segment(text).lower().split())
    return sorted(wanted & present)


def best_section(body: str, query: str) -> str:
    """The section of a runbook that shares most words with the query."""
    words = set(segment(query).lower().split())
    sections = [s.strip() for s in re.split(r"\n(?=## )", body) if s.strip()]
    if not sections:
        return body[:600]

    def overlap(section: str) -> int:
        return len(words & set(segment(section).lower().split()))

    return max(sections, key=overlap)
