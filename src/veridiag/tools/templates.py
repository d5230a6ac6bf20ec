"""Log templates with drain3: ``Connection is not available, request timed out after <*>ms``.

Raw ``drain3`` runs ~17 k messages/s here: a million-line import would spend its whole budget in
it. Real logs repeat the same few shapes, so each message is first masked (numbers, hex, uuids,
IPs, host:port → a mask token; see ``mask``) and the masked text is memoised to its template id:
drain3 sees each distinct shape once, and a repeated shape costs a dict lookup. Measured with
``scripts/logformats_bench.py``: 115–150 k messages/s on service-log shapes, CPU time.

The mask is its own token (``<#>``), shown as ``<*>`` like drain's own parameters, so
``after 5300ms`` reads ``after <*>ms``: the similarity (``_Drain``) needs to see which tokens
were values, and with drain's ``<*>`` a message of mostly values could never reach the threshold.

State is plain JSON (zlib-compressed): the clusters, drain's prefix tree as it is (so a restored
miner takes the same paths) and part of the memo, never pickled objects.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from drain3.drain import Drain, LogCluster, Node

PARAM = "<*>"
_MASK = "<#>"
# Longest first: a uuid is not read as hex runs, an IP not as four numbers.
_VARIABLE = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"  # uuid
    r"|(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?(?![\w.])"  # IPv4[:port]
    r"|(?<![\w])0[xX][0-9a-fA-F]+"  # 0x1f
    r"|(?<![\w-])(?=[a-fA-F]*\d)[0-9a-fA-F]{8,}(?![\w-])"  # hex ids, digests
    r"|(?<![\w.-])(?:[\w-]+\.)+[A-Za-z][\w-]*:\d{1,5}(?![\w.])"  # host.example.com:8080 (not a bare class name)
    r"|(?<![\w.-])[-+]?\d+(?:[.,:]\d+)*"  # 42, -1, 0.25, 12:01:01 (a unit after it stays: <*>ms)
)

_LETTER = re.compile(r"[A-Za-z]")

SIM_TH = 0.7  # loghub sweep (scripts/loghub_eval.py --sweep): best or tied-best on all five files
DEPTH = 4
MAX_CHILDREN = 100
_MEMO_LIMIT = 200_000
_SAVED_MEMO = 20_000
_STATE_VERSION = 1


@lru_cache(maxsize=1 << 16)
def _is_value(token: str) -> bool:
    """A template token that is only a value: ``<*>``, or masks with punctuation (``<#>]``, ``<#>:<#>``).

    A mask inside a word (``<#>ms``, ``steps=<#>``, ``/v2/<#>/servers``) leaves a fixed part to compare.
    """
    return token == PARAM or (_MASK in token and _LETTER.search(token.replace(_MASK, "")) is None)


class _Drain(Drain):  # type: ignore[misc]  # drain3 is untyped
    """Drain whose similarity leaves out template tokens that are only a value (``_is_value``).

    Stock drain counts ``[instance: <mask>]`` as two equal tokens, so two messages that share only
    a masked prefix looked 50 % alike and merged (loghub OpenStack: "Claim successful" and
    "Creating image" in one template).
    """

    def get_seq_distance(self, seq1: Sequence[str], seq2: Sequence[str], include_params: bool) -> tuple[float, int]:
        fixed = similar = params = 0
        for token1, token2 in zip(seq1, seq2, strict=True):
            if _is_value(token1):
                params += 1
            else:
                fixed += 1
                if token1 == token2:
                    similar += 1
        if include_params:  # drain's exact match(): a value position matches anything
            return (similar + params) / len(seq1) if seq1 else 1.0, params
        return (similar / fixed if fixed else 1.0), params


# Where ``_VARIABLE`` matches depends on which characters are digits, never on which digit they
# are, except for the ``0`` of ``0x``: a message's *shape* (each digit read as 5; a ``0`` kept when
# the message writes ``0x``) is masked at the same places. Shapes repeat where the numbers do not.
# Shapes are taken in UTF-8 (digits are single bytes there, and bytes.translate is ~5x faster
# than str.translate); a shape differs from its message only where it reads 5.
_EVERY_DIGIT = bytes.maketrans(b"0123456789", b"5555555555")
_DIGIT_BUT_ZERO = bytes.maketrans(b"123456789", b"555555555")
#: The (start, end) slices a message keeps between its masks; end None: to the end.
Kept = tuple[tuple[int, int | None], ...]
_SHAPES: dict[bytes, str | Kept] = {}
_SHAPE_LIMIT = 50_000
_TOKEN_SPANS: dict[str, tuple[tuple[int, int], ...]] = {}
_TOKEN_LIMIT = 100_000


def mask(message: str) -> str:
    """``message`` with variable tokens replaced by the mask token (shown as ``<*>``).

    Memoised by the message's shape: the masked text itself when every digit falls in a mask
    (the common case: the shape then reads as the message), else the slices kept between the
    masks. A new shape is read a space-separated token at a time through a second memo (no mask
    spans a space), so the regex runs once per new token shape, not once per new number or id.
    Measured against a memo of each distinct token: 5.7x the messages/s on the benchmark's
    service lines (where ids and latencies never repeat), 1.5x on the loghub samples, cold memos.
    """
    raw = message.encode("utf-8", "surrogatepass")
    shape = raw.translate(_DIGIT_BUT_ZERO if b"0x" in raw or b"0X" in raw else _EVERY_DIGIT)
    masked = _SHAPES.get(shape)
    if masked is None:
        masked = _shape_mask(shape.decode("utf-8", "surrogatepass"))
        if len(_SHAPES) >= _SHAPE_LIMIT:
            _SHAPES.clear()
        _SHAPES[shape] = masked
    if isinstance(masked, str):
        return masked
    return _MASK.join([message[start:end] for start, end in masked])


def _shape_mask(shape: str) -> str | Kept:
    """How every message of ``shape`` is masked (see ``mask``)."""
    kept: list[tuple[int, int | None]] = []
    done = offset = 0
    for token in shape.split(" "):
        spans = _TOKEN_SPANS.get(token)
        if spans is None:
            spans = tuple(match.span() for match in _VARIABLE.finditer(token))
            if len(_TOKEN_SPANS) >= _TOKEN_LIMIT:
                _TOKEN_SPANS.clear()
            _TOKEN_SPANS[token] = spans
        for start, end in spans:
            kept.append((done, offset + start))
            done = offset + end
        offset += len(token) + 1
    kept.append((done, None))
    pieces = [shape[start:end] for start, end in kept]
    if any("5" in piece for piece in pieces):
        return tuple(kept)
    return _MASK.join(pieces)


@dataclass(frozen=True, slots=True)
class TemplateCount:
    """One template of ``mine``: its text, how many messages it covers, the index of its first."""

    template_id: int
    template: str
    count: int
    first_index: int


class TemplateMiner:
    """Incremental template mining with ids stable across calls and across ``state()`` / restore."""

    def __init__(self, state: bytes | None = None, *, sim_th: float = SIM_TH, depth: int = DEPTH) -> None:
        """A new miner, or one restored from ``state()`` bytes (which carry their own sim_th and depth)."""
        self._drain = _Drain(depth=depth, sim_th=sim_th, max_children=MAX_CHILDREN)
        self._memo: dict[str, int] = {}
        if state is not None:
            self._restore(state)

    def add(self, message: str) -> int:
        """The template id of ``message`` (creating or widening a template as drain decides)."""
        masked = mask(message)
        template_id = self._memo.get(masked)
        if template_id is None:
            cluster, _ = self._drain.add_log_message(masked)
            template_id = cluster.cluster_id
            if len(self._memo) >= _MEMO_LIMIT:
                self._memo.clear()  # a forgotten shape goes through drain again and finds its template
            self._memo[masked] = template_id
        return template_id

    def template(self, template_id: int) -> str:
        """The current text of a template; KeyError for an id this miner never gave."""
        cluster: LogCluster | None = self._drain.id_to_cluster.get(template_id)
        if cluster is None:
            raise KeyError(template_id)
        return _display(cluster.log_template_tokens)

    def templates(self) -> dict[int, str]:
        return {cid: _display(cluster.log_template_tokens) for cid, cluster in self._drain.id_to_cluster.items()}

    def state(self) -> bytes:
        """Everything needed to continue with the same ids: compact JSON, compressed."""
        drain = self._drain
        memo = dict(list(self._memo.items())[-_SAVED_MEMO:])
        payload = {
            "v": _STATE_VERSION,
            "depth": drain.log_cluster_depth,
            "sim_th": drain.sim_th,
            "counter": drain.clusters_counter,
            "clusters": [[c.cluster_id, c.size, list(c.log_template_tokens)] for c in drain.id_to_cluster.values()],
            "tree": _dump_node(drain.root_node),
            "memo": memo,
        }
        return zlib.compress(json.dumps(payload, separators=(",", ":")).encode())

    def _restore(self, state: bytes) -> None:
        try:
            payload = json.loads(zlib.decompress(state))
            if payload["v"] != _STATE_VERSION:
                raise ValueError(f"template state version {payload['v']} is not {_STATE_VERSION}")
            drain = _Drain(depth=int(payload["depth"]), sim_th=float(payload["sim_th"]), max_children=MAX_CHILDREN)
            for cluster_id, size, tokens in payload["clusters"]:
                cluster = LogCluster([str(t) for t in tokens], int(cluster_id))
                cluster.size = int(size)
                drain.id_to_cluster[cluster.cluster_id] = cluster
            drain.clusters_counter = int(payload["counter"])
            drain.root_node = _load_node(payload["tree"])
            memo = {str(k): int(v) for k, v in payload["memo"].items()}
        except (zlib.error, ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
            raise ValueError(f"unusable template state: {exc}") from exc
        self._drain, self._memo = drain, memo


def _display(tokens: Iterable[str]) -> str:
    return " ".join(tokens).replace(_MASK, PARAM)


def _dump_node(node: Node) -> list[Any]:
    return [list(node.cluster_ids), {key: _dump_node(child) for key, child in node.key_to_child_node.items()}]


def _load_node(data: list[Any]) -> Node:
    node = Node()
    ids, children = data
    node.cluster_ids = [int(i) for i in ids]
    node.key_to_child_node = {str(key): _load_node(child) for key, child in children.items()}
    return node


def mine(messages: Iterable[str]) -> list[TemplateCount]:
    """One-shot mining for query time (a backend that returns raw lines): templates by count, most first."""
    miner = TemplateMiner()
    counts: dict[int, int] = {}
    first: dict[int, int] = {}
    for index, message in enumerate(messages):
        template_id = miner.add(message)
        if template_id in counts:
            counts[template_id] += 1
        else:
            counts[template_id] = 1
            first[template_id] = index
    return sorted(
        (TemplateCount(tid, miner.template(tid), count, first[tid]) for tid, count in counts.items()),
        key=lambda t: (-t.count, t.first_index),
    )
