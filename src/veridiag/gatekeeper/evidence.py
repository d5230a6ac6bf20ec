"""What the Gatekeeper reads of one recorded invocation, built once per invocation.

Every check reads the same things of a cited invocation: its retrieval details as text, its
arguments and details as the text facts are looked up in, the whole output as a reader sees
it (``Corpus``: full width folded, numerals read, with its word and digit runs, which rule
out most absent facts without a scan) and the output's whitespace tokens, which let the
matcher skip searching 64 KB for excerpt pieces that cannot occur. They depend on
the invocation alone, and an invocation never changes once recorded, so ``EvidenceIndex``
builds them once and every rule of every check — later rounds of the run included — reuses
them.

Where it lives: in memory, in the Gatekeeper's ``EvidenceIndexCache``, keyed by session and
invocation id — not in the ``tool_invocation`` row. It is derived data (≈ 1 ms per 64 KB to
rebuild); storing it would add a migration, make every stored invocation larger, tie the
store to the text layer's version and bring nothing a rebuild after loading does not. Each
entry is checked against the texts of the invocation it is asked for, so an id reused by
another store (the evals copy one database file per case) never sees another call's index.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from veridiag.contracts.invocation import InvocationView
from veridiag.contracts.json import JsonObject
from veridiag.text.assertions import FoldedLines
from veridiag.text.entities import Corpus, WordRuns
from veridiag.text.phrases import PhraseList
from veridiag.text.render import invocation_context, invocation_json

#: Outputs from this size on get their tokens and word runs built (``Corpus.indexed``). Both only
#: spare scans, never change an answer; below it a scan is cheaper than building them: an 8 KB
#: log's cost ~0.25 ms, ~10 checks' worth of its look-ups (each a ~1 µs ``str.find``), while a
#: session checks its outputs once or twice (measured on the pipeline bench).
INDEXED_FROM = 16384


@dataclass(frozen=True, slots=True)
class EvidenceIndex:
    """One invocation's texts as the rules search them; immutable, shared by concurrent checks."""

    output: str
    output_preview: str
    arguments: JsonObject
    details: JsonObject | None
    #: The preview adds nothing to search: it is the head of the output.
    preview_in_output: bool
    retrieval_details: str
    #: Arguments and retrieval details (``text.render.invocation_context``).
    context: str
    #: ``context`` without the details' records: where a claim's facts count as the call's own.
    #: The records (a log query's patterns, a series' anomalies) restate output lines: a fact
    #: only there is the output's, judged as one found elsewhere in it (a neighbouring
    #: pattern's count is no count of the pattern a claim quotes).
    properties: str
    #: Output, preview and context read as a reader sees them: where a claim's facts are looked up.
    corpus: Corpus
    #: Whitespace tokens of ``output`` (or more): a piece with an inner word not among them is not
    #: in it. None, with ``output_runs``, for an output under ``INDEXED_FROM``: searched as it is.
    output_tokens: frozenset[str] | None
    #: Word runs of ``output`` (or more): a piece with a run that is none of them is not in it.
    output_runs: WordRuns | None
    #: Whether the output states none of a phrase list (by its probes): a memo of answers
    #: about these texts, not state — written once per list, never changed.
    _phrase_free: dict[tuple[str, ...], bool] = field(default_factory=dict, compare=False, repr=False)
    #: ``folded_lines``, once built (a one-slot memo, as ``_phrase_free``).
    _folded_lines: list[FoldedLines] = field(default_factory=list, compare=False, repr=False)

    @classmethod
    def of(cls, invocation: InvocationView) -> EvidenceIndex:
        output, preview = invocation.output or "", invocation.output_preview or ""
        context = invocation_context(invocation)
        corpus = Corpus([output, preview, context])
        output_tokens: frozenset[str] | None = None
        output_runs: WordRuns | None = None
        if len(output) >= INDEXED_FROM:
            # Indexed now: ``Corpus.contains`` finds a whole-token fact in its tokens and rules out
            # most absent ones by its word and digit runs, without scanning the output.
            corpus_tokens = corpus.indexed().tokens
            # Read as a reader would, ASCII stays as it is: the corpus's tokens hold the output's.
            output_tokens = corpus_tokens if output.isascii() else frozenset(output.split())
            output_runs = corpus.runs if output.isascii() else None
        return cls(
            output=output,
            output_preview=preview,
            arguments=dict(invocation.arguments),
            details=dict(invocation.retrieval_details) if invocation.retrieval_details is not None else None,
            preview_in_output=bool(output) and output.startswith(preview),
            retrieval_details=invocation_json(invocation.retrieval_details),
            context=context,
            properties=invocation_context(invocation, records=False),
            corpus=corpus,
            output_tokens=output_tokens,
            output_runs=output_runs,
        )

    def describes(self, invocation: InvocationView) -> bool:
        """Built from this invocation's texts (an equal string compares in one ``memcmp``)."""
        return (
            self.output == (invocation.output or "")
            and self.output_preview == (invocation.output_preview or "")
            and self.arguments == invocation.arguments
            and self.details == invocation.retrieval_details
        )

    def folded_lines(self) -> FoldedLines:
        """The corpus's reader copy line by line, lower-cased (``AssertedFacts.of_folded``):
        built on the first check that asks, reused by every later one."""
        if not self._folded_lines:
            tokens = self.corpus.tokens if self.corpus.runs is not None else None
            self._folded_lines.append(FoldedLines.of(self.corpus.text, self.corpus.runs, tokens))
        return self._folded_lines[0]

    def free_of(self, phrases: PhraseList) -> bool:
        """The output states none of ``phrases``, so no line of it does: a check of the lines
        an excerpt aligns with can be skipped. One scan per invocation and list, of the
        corpus's reader copy (the output with its preview and context: free of them, the
        output is). An output under ``INDEXED_FROM`` is not read whole (False: its lines are
        checked): a session reads a few of its lines, cheaper than all of it (~0.15 ms per 8 KB)."""
        if len(self.output) < INDEXED_FROM:
            return False
        free = self._phrase_free.get(phrases.probes)
        if free is None:
            free = self._phrase_free[phrases.probes] = not phrases.hits(self.corpus.text, read=True)
        return free


class EvidenceIndexCache:
    """The most recently used invocations' indexes, safe to share between concurrent runs.

    Bounded: an index of a 64 KB output holds ≈ 280 KB (a reader copy and the token set
    beside the output), so 64 of them — the invocations of several recent sessions — stay
    under 20 MB in a long-running server.
    """

    def __init__(self, capacity: int = 64) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[tuple[str, int], EvidenceIndex] = OrderedDict()
        self._lock = threading.Lock()

    def index(self, invocation: InvocationView) -> EvidenceIndex:
        """The invocation's index, built on first use."""
        key = (invocation.session_id, invocation.id)
        with self._lock:
            cached = self._entries.get(key)
            if cached is not None:
                self._entries.move_to_end(key)
        if cached is not None and cached.describes(invocation):
            return cached
        built = EvidenceIndex.of(invocation)
        with self._lock:
            self._entries[key] = built
            self._entries.move_to_end(key)
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)
        return built

    def __len__(self) -> int:
        return len(self._entries)
