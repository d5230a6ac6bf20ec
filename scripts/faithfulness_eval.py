"""How often the exact-fact check rejects faithful claims, measured on RAGTruth.

Input: JSON lines with at least ``example_id``, ``claim``, ``label`` (false = faithful, true = the
claim contains a hallucination), ``task_type`` and ``evidence`` (the passages the claim is checked
against; ``null`` when no evidence was transcribed — such a claim must carry no fact, and the script
reports any that does). The RAGTruth claim-level copy in augustoafleal/ragtruth-publichearingbr-nli
(``data/processed/ragtruth_textual/test.jsonl``) has this shape.

For every claim, ``extract_entities(claim)`` lists its exact facts; the claim is *rejected* when at
least one of them is not contained in ``Corpus(evidence)``. Claims with no fact cannot be judged and
are only counted. Reported:

* faithful claims: share rejected (false-rejection rate), with the most frequent causes;
* hallucinated claims: share rejected (what this check alone detects);
* per task type and per entity kind;
* the same with the reader normalisation switched off (``reader_text`` replaced by the identity in
  ``veridiag.text.entities``, which the lexer and ``Corpus`` both call), and the claims whose
  verdict changes;
* what-if relaxations (evidence rewritten before the look-up, the library untouched): how many
  false rejections each would remove and how many hallucination detections it would lose.

Usage: ``.venv/bin/python scripts/faithfulness_eval.py /tmp/ragtruth/*.jsonl [--out FILE]``
(the output file, ``/tmp/ragtruth/results.jsonl`` by default, is skipped if it is among the inputs).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import veridiag.text.entities as ent
from veridiag.text.entities import Corpus, Entity, extract_entities
from veridiag.text.units import unit_table

DEFAULT_OUT = Path("/tmp/ragtruth/results.jsonl")


@contextmanager
def normalisation(on: bool) -> Iterator[None]:
    """With ``on`` false the lexer and ``Corpus`` read the raw text (``reader_text`` = identity)."""
    original = ent.reader_text
    if not on:
        ent.reader_text = lambda text: text  # type: ignore[assignment]
    try:
        yield
    finally:
        ent.reader_text = original


# ---------------------------------------------------------------------------------------------
# Loading


def load(paths: Iterable[Path], skip: Path) -> list[dict[str, Any]]:
    claims: dict[str, dict[str, Any]] = {}
    for path in paths:
        if path.resolve() == skip.resolve():
            continue
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut at a page boundary
                if not isinstance(row, dict) or "claim" not in row or "label" not in row or "verdict" in row:
                    continue
                key = str(row.get("example_id") or f"{path.name}:{len(claims)}")
                claims[key] = row
    return list(claims.values())


# ---------------------------------------------------------------------------------------------
# Why a fact was not found: a best-effort classification, to be read with the examples


_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40,
    "fifty": 50, "sixty": 60, "ninety": 90, "hundred": 100,
}  # fmt: skip
_RANGE_SEP = r"\s*(?:-|–|—|~|to|and|or)\s*"


def _number_text(entity: Entity) -> str:
    match = re.match(r"\d+(?:\.\d+)?", entity.text)
    return match.group() if match else entity.text


def cause(entity: Entity, evidence: str) -> str:
    """A short label for why ``entity`` was not found in ``evidence``."""
    text = evidence
    if entity.kind == "quantity":
        number = _number_text(entity)
        unit = entity.text[len(number) :].strip()
        spellings = "|".join(
            re.escape(s)
            for s, known in unit_table().by_spelling.items()
            if known.dimension == entity.dimension and s.isascii()
        )
        num = re.escape(number)
        if re.search(rf"(?<![\d.]){num}{_RANGE_SEP}\d+(?:\.\d+)?\s?(?:{spellings})(?![A-Za-z])", text, re.I):
            return "range in evidence: claim number is its lower end"
        if re.search(rf"\d+(?:\.\d+)?{_RANGE_SEP}{num}\s?(?:{spellings})(?![A-Za-z])", text, re.I):
            return "range in evidence: claim number is its upper end"
        if unit.lower() == "s" and re.fullmatch(r"\d0", number):
            return "lexer: decade/age ('50s') read as seconds"
        if re.search(rf"(?<![\d.,]){num}(?![\d]|\.\d)", text):
            following = re.search(rf"(?<![\d.,]){num}(?![\d]|\.\d)\s?-?([A-Za-z%]+)?", text)
            word = (following.group(1) or "") if following else ""
            if word.lower() in unit_table().by_spelling:
                return "number present with another unit of the same dimension"
            return f"number present, unit written differently or absent ('{number} {word}'.strip())"
        words = [w for w, v in _NUMBER_WORDS.items() if str(v) == number]
        if any(re.search(rf"\b{w}\b", text, re.I) for w in words):
            return "number written as a word in evidence"
        return "number absent from evidence"
    if entity.kind == "ratio":
        a, b = entity.text.split("/")
        if re.search(rf"(?<!\d){a}\s*/\s*{b}(?!\d)", text):
            return "ratio present but glued to a word/unit"
        return "ratio absent from evidence"
    if entity.kind == "timestamp":
        return "time/date written differently or absent"
    if entity.kind == "error_code":
        if entity.text.lower() in text.lower():
            return "code present but glued to other characters"
        return "code/name absent from evidence"
    return f"{entity.kind} absent from evidence"


def snippet(entity: Entity, evidence: str, claim: str, width: int = 70) -> str:
    """The part of the evidence nearest to the fact: around its number, else the sentence that
    shares most words with the claim."""
    flat = re.sub(r"\s+", " ", evidence)
    probe = _number_text(entity) if entity.kind in ("quantity", "ratio") else entity.text
    match = re.search(rf"(?<![\d.]){re.escape(probe)}(?![\d])", flat) or re.search(re.escape(probe), flat, re.I)
    if match:
        start, end = max(0, match.start() - width), min(len(flat), match.end() + width)
        return ("…" if start else "") + flat[start:end] + ("…" if end < len(flat) else "")
    words = set(re.findall(r"[a-z]{4,}", claim.lower()))
    sentences = re.split(r"(?<=[.!?])\s+", flat)
    best = max(sentences, key=lambda s: len(words & set(re.findall(r"[a-z]{4,}", s.lower()))), default="")
    return "(not found) " + best[: 2 * width]


# ---------------------------------------------------------------------------------------------
# What-if relaxations: evidence rewritten so that the library's own look-up can find the fact


def _expand_ranges(text: str) -> str:
    """``20-30 minutes`` / ``6 to 8 minutes`` → also state ``20 minutes`` and ``30 minutes``."""
    units = "|".join(re.escape(u) for u in sorted(unit_table().by_spelling, key=len, reverse=True) if u.isascii())

    def repl(m: re.Match[str]) -> str:
        return f"{m.group(0)} ({m.group(1)} {m.group(3)}) ({m.group(2)} {m.group(3)})"

    return re.sub(
        rf"(?<![\w.])(\d+(?:\.\d+)?){_RANGE_SEP}(\d+(?:\.\d+)?)\s?({units})(?![A-Za-z])", repl, text, flags=re.I
    )


def _number_words(text: str) -> str:
    """``thirty minutes`` → ``30 minutes`` (only before a known unit)."""
    units = "|".join(
        re.escape(u) for u in sorted(unit_table().by_spelling, key=len, reverse=True) if u.isascii() and len(u) > 1
    )
    words = "|".join(_NUMBER_WORDS)
    return re.sub(
        rf"\b({words})(\s|-)({units})\b",
        lambda m: f"{_NUMBER_WORDS[m.group(1).lower()]} {m.group(3)}",
        text,
        flags=re.I,
    )


WHAT_IF: dict[str, Callable[[str], str]] = {
    "ranges in evidence state both ends (20-30 minutes, 6 to 8 minutes)": _expand_ranges,
    "number words before a unit read as digits (thirty minutes)": _number_words,
}


# ---------------------------------------------------------------------------------------------
# Checking


@dataclass
class Verdict:
    entities: list[Entity]
    missing: list[Entity] = field(default_factory=list)

    @property
    def judged(self) -> bool:
        return bool(self.entities)

    @property
    def rejected(self) -> bool:
        return bool(self.missing)


def check(claim: str, evidence: list[str], rewrite: Callable[[str], str] | None = None) -> Verdict:
    entities = extract_entities(claim)
    texts = [rewrite(t) for t in evidence] if rewrite else evidence
    corpus = Corpus(texts)
    return Verdict(entities, [e for e in entities if not corpus.contains(e)])


def rate(k: int, n: int) -> str:
    if not n:
        return "   -   (0/0)"
    p = k / n
    z = 1.96
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return f"{100 * p:5.1f}% ({k}/{n}; 95% CI {100 * max(0, centre - half):.0f}–{100 * min(1, centre + half):.0f}%)"


def main(argv: list[str] | None = None) -> int:  # noqa: PLR0915 — one linear report
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--top", type=int, default=25, help="how many false-rejection reasons to list")
    args = parser.parse_args(argv)

    rows = load(args.files, args.out)
    if not rows:
        print("no claims found", file=sys.stderr)
        return 1

    verdicts: dict[bool, list[Verdict | None]] = {}
    for on in (True, False):
        with normalisation(on):
            verdicts[on] = [check(r["claim"], r["evidence"]) if r.get("evidence") is not None else None for r in rows]
    untranscribed_with_facts: list[str] = []
    for row in rows:
        with normalisation(True):
            facts = extract_entities(row["claim"])
        if row.get("evidence") is None and facts:
            untranscribed_with_facts.append(str(row.get("example_id")))

    # ---- headline counts ----------------------------------------------------------------
    print(
        f"claims read: {len(rows)}  (faithful {sum(not r['label'] for r in rows)}, "
        f"hallucinated {sum(bool(r['label']) for r in rows)})"
    )
    by_task = Counter(str(r.get("task_type")) for r in rows)
    print("task types:", ", ".join(f"{t} {n}" for t, n in sorted(by_task.items())))
    if untranscribed_with_facts:
        print(f"WARNING: {len(untranscribed_with_facts)} claims have facts but no evidence: {untranscribed_with_facts}")

    def table(on: bool, title: str) -> dict[str, Any]:
        vs = verdicts[on]
        judged = [(r, v) for r, v in zip(rows, vs, strict=True) if v is not None and v.judged]
        none = sum(1 for r, v in zip(rows, vs, strict=True) if v is None or not v.judged)
        faithful = [(r, v) for r, v in judged if not r["label"]]
        halluc = [(r, v) for r, v in judged if r["label"]]
        print(f"\n== {title} ==")
        print(f"claims with no exact fact (not judgeable): {none}/{len(rows)} ({100 * none / len(rows):.1f}%)")
        print(f"claims judged: {len(judged)} (faithful {len(faithful)}, hallucinated {len(halluc)})")
        fr = sum(v.rejected for _, v in faithful)
        dr = sum(v.rejected for _, v in halluc)
        print(f"false-rejection rate (faithful claims rejected): {rate(fr, len(faithful))}")
        print(f"detection rate (hallucinated claims rejected):   {rate(dr, len(halluc))}")
        print(f"{'task type':<10} {'claims':>6} {'judged':>6}  {'false rejection':<34} {'detection':<30}")
        for task in sorted(by_task):
            t_rows = [r for r in rows if str(r.get("task_type")) == task]
            f_t = [v for r, v in faithful if str(r.get("task_type")) == task]
            h_t = [v for r, v in halluc if str(r.get("task_type")) == task]
            print(
                f"{task:<10} {len(t_rows):>6} {len(f_t) + len(h_t):>6}  "
                f"{rate(sum(v.rejected for v in f_t), len(f_t)):<34} {rate(sum(v.rejected for v in h_t), len(h_t))}"
            )
        kinds: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # facts, missing, claims, rejected
        for _, v in faithful:
            seen: set[str] = set()
            for e in v.entities:
                kinds[e.kind][0] += 1
                kinds[e.kind][1] += e in v.missing
                if e.kind not in seen:
                    seen.add(e.kind)
                    kinds[e.kind][2] += 1
                    kinds[e.kind][3] += any(m.kind == e.kind for m in v.missing)
        print(f"{'entity kind (faithful claims)':<30} {'facts':>5} {'not found':>9}  claims with kind: rejected by it")
        for kind, (n, miss, c, rej) in sorted(kinds.items(), key=lambda kv: -kv[1][0]):
            print(f"{kind:<30} {n:>5} {miss:>9}  {rate(rej, c)}")
        return {"faithful_rejected": fr, "faithful": len(faithful), "halluc_rejected": dr, "halluc": len(halluc)}

    summary_on = table(True, "normalisation ON (reader_text, as shipped)")
    summary_off = table(False, "normalisation OFF (reader_text = identity)")

    changed = [
        (r, a, b)
        for r, a, b in zip(rows, verdicts[True], verdicts[False], strict=True)
        if a is not None
        and b is not None
        and (a.judged, a.rejected, [e.text for e in a.entities]) != (b.judged, b.rejected, [e.text for e in b.entities])
    ]
    print(f"\nclaims whose facts or verdict change with normalisation: {len(changed)}")
    for r, a, b in changed[:10]:
        print(
            f"  {r.get('example_id')}: on {[e.text for e in a.entities]} rejected={a.rejected} | "
            f"off {[e.text for e in b.entities]} rejected={b.rejected}"
        )

    # ---- reasons for false rejections -----------------------------------------------------
    reasons: Counter[tuple[str, str, str]] = Counter()
    causes: Counter[str] = Counter()
    examples: dict[tuple[str, str, str], str] = {}
    cause_examples: dict[str, list[str]] = defaultdict(list)
    for r, v in zip(rows, verdicts[True], strict=True):
        if v is None or not v.rejected or r["label"]:
            continue
        evidence = "\n".join(r["evidence"])
        for e in v.missing:
            c = cause(e, evidence)
            key = (e.kind, e.text, c)
            reasons[key] += 1
            examples.setdefault(key, snippet(e, evidence, r["claim"]))
            causes[c] += 1
            if len(cause_examples[c]) < 3:
                cause_examples[c].append(
                    f"{r.get('example_id')}: claim '{e.text}' | evidence: {snippet(e, evidence, r['claim'], 50)}"
                )
    print(f"\n== false rejections by cause (facts not found in faithful claims: {sum(causes.values())}) ==")
    for c, n in causes.most_common():
        print(f"{n:>4}  {c}")
        for ex in cause_examples[c]:
            print(f"        {ex}")
    print(f"\n== top {args.top} false-rejection reasons (kind, claim fact, cause, evidence snippet) ==")
    for (kind, text, c), n in reasons.most_common(args.top):
        print(f"{n:>3}  {kind:<11} {text!r:<18} {c}\n       evidence: {examples[(kind, text, c)]}")

    # ---- what-if relaxations ------------------------------------------------------------
    print("\n== what-if: evidence rewritten before the look-up (library unchanged) ==")
    base = verdicts[True]
    for name, rewrite in WHAT_IF.items():
        fixed = lost = 0
        for r, v in zip(rows, base, strict=True):
            if v is None or not v.rejected:
                continue
            after = check(r["claim"], r["evidence"], rewrite)
            if not after.rejected:
                if r["label"]:
                    lost += 1
                else:
                    fixed += 1
        print(f"  {name}: removes {fixed} false rejection(s); loses {lost} detection(s)")

    # ---- per-claim output ---------------------------------------------------------------
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as out:
        for r, on, off in zip(rows, verdicts[True], verdicts[False], strict=True):
            record: dict[str, Any] = {
                "example_id": r.get("example_id"),
                "source_id": r.get("source_id"),
                "task_type": r.get("task_type"),
                "label": r["label"],
                "label_types": r.get("label_types"),
                "claim": r["claim"],
                "evidence_transcribed": r.get("evidence") is not None,
            }
            for tag, v in (("normalised", on), ("raw", off)):
                if v is None:
                    record[tag] = None
                    continue
                evidence = "\n".join(r["evidence"])
                record[tag] = {
                    "entities": [{"kind": e.kind, "text": e.text} for e in v.entities],
                    "judged": v.judged,
                    "rejected": v.rejected,
                    "missing": [
                        {
                            "kind": e.kind,
                            "text": e.text,
                            "cause": cause(e, evidence),
                            "evidence_snippet": snippet(e, evidence, r["claim"]),
                        }
                        for e in v.missing
                    ],
                }
            record["verdict"] = (
                "no_fact" if on is None or not on.judged else ("rejected" if on.rejected else "accepted")
            )
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    print(f"\nper-claim results: {args.out}  (summary on={summary_on}, off={summary_off})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
