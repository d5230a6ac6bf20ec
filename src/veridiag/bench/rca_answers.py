"""veridiag's side of the RCA benchmark: one neutral question per fault through the real
pipeline, in process, on a home built from the day folder by the importers; its answer read
back as the services it names, in order, and the confirmed claims that name a wrong origin.

How an answer is read (the definitions the scores rest on):

- **Services named**: the final answer after its first line (the scope line, which lists the
  services examined, not a finding), each of the day's services at its first mention, in
  order. A name counts where it stands as a name: not inside a longer name
  (``ts-order-service`` in ``ts-admin-order-service``), with a pod's replica tail after it
  allowed (``cartservice-579f59597d-wc2lz`` names ``cartservice``).
- **Wrong origin confirmed**: an allowed claim of the answer shown as confirmed (verification
  ``direct_observation``) that presents another service than the culprit as where the trouble
  started — structurally: its claim type is one of ``rca.yaml``'s origin types, and the first
  of the day's services its text names is not the culprit. Never by its words: a claim quotes
  its evidence, and evidence says "root cause" on its own (``rca.yaml`` says when that bit).
"""

from __future__ import annotations

import re
import tempfile
import time
from collections.abc import Callable, Collection, Sequence
from functools import lru_cache
from pathlib import Path

from veridiag.bench.nezha import Fault, NezhaDay
from veridiag.bench.rca_score import CaseScore, score
from veridiag.bench.rca_words import rca_words
from veridiag.config import EmbeddedSettings, Settings, ToolsSettings
from veridiag.contracts.composer import AllowedClaim
from veridiag.contracts.invocation import InvocationRecord
from veridiag.ingest.batch import (
    BatchReport,
    import_dependency_files,
    import_log_files,
    import_metric_files,
    import_trace_files,
)
from veridiag.pipeline.factory import assemble
from veridiag.tools.backends.embedded import EmbeddedEnvironment

Progress = Callable[[str], None]

#: Characters that continue a name: a service named inside a longer token is no mention of it.
#: A ``-`` after the name is allowed (a pod's replica tail), a ``-`` before it is not.
_BEFORE = r"(?<![A-Za-z0-9_-])"
_AFTER = r"(?![A-Za-z0-9_])"


def question_for(fault: Fault, index: int) -> str:
    """The ``index``-th question (phrasings in turn): the injection's day and minute, UTC."""
    phrasings = rca_words().questions
    moment = fault.inject_time
    return phrasings[index % len(phrasings)].format(day=moment.date().isoformat(), time=moment.strftime("%H:%M"))


@lru_cache(maxsize=16)
def _mentions(services: tuple[str, ...]) -> re.Pattern[str]:
    # Longest first: at one place the longest name wins (``ts-travel2-service`` is no ``ts-travel…``).
    names = sorted(services, key=len, reverse=True)
    return re.compile(_BEFORE + "(" + "|".join(re.escape(name) for name in names) + ")" + _AFTER)


def services_named(text: str, services: Collection[str]) -> list[str]:
    """The services ``text`` names, in order of first mention."""
    if not services:
        return []
    found: list[str] = []
    for match in _mentions(tuple(sorted(services))).finditer(text):
        if match[1] not in found:
            found.append(match[1])
    return found


def answer_services(answer: str, services: Collection[str]) -> list[str]:
    """The services an answer names after its first line (the scope line), in order."""
    _scope, _newline, rest = answer.partition("\n")
    return services_named(rest, services)


def wrong_origins(claims: Sequence[AllowedClaim], services: Collection[str], culprit: str) -> list[AllowedClaim]:
    """The allowed claims shown as confirmed that present another service as the origin (see
    the module's docstring)."""
    origin_types = rca_words().origin_claim_types
    wrong = []
    for claim in claims:
        if claim.verification != "direct_observation" or claim.claim_type not in origin_types:
            continue
        named = services_named(claim.claim_text, services)
        if named and named[0] != culprit:
            wrong.append(claim)
    return wrong


# -- the pipeline ----------------------------------------------------------------------------


def home_settings(home: Path) -> Settings:
    """A home of its own for one day: the embedded store without the demo, the offline engine,
    local files only — whatever ``VERIDIAG_*`` or ``veridiag.yaml`` say about the user's own."""
    return Settings(
        home=home,
        database_url=None,
        engine="offline",
        tools=ToolsSettings(),
        embedded=EmbeddedSettings(load_demo=False),
        timezone="UTC",
    )


def build_home(day: NezhaDay, settings: Settings, progress: Progress) -> list[BatchReport]:
    """The day folder into the home's embedded store as a user imports what they have:
    ``metric/`` as ``veridiag data import-metrics <folder>`` does (each pod's file under the pod's
    workload, the files that are no pod's series left with why), ``log/`` as ``import-logs``
    does (each container record under its pod's workload), the call graph a ``dependency.csv``
    states as ``import-dependencies`` does, and ``trace/`` as ``import-traces`` does (spans as
    per-service series, and their calls)."""
    environment = EmbeddedEnvironment(settings.embedded_path, load_demo=False)
    reports = []
    graph = day.folder / "metric" / "dependency.csv"
    sources = (
        ("metrics", day.folder / "metric", import_metric_files),
        ("logs", day.folder / "log", import_log_files),
        ("call graph", graph, import_dependency_files),
        ("traces", day.folder / "trace", import_trace_files),
    )
    try:
        for what, source, reader in sources:
            if not source.exists():
                continue
            files = [p for p in source.iterdir() if p.is_file()] if source.is_dir() else [source]
            total = sum(path.stat().st_size for path in files) or 1

            def heard(done: int, name: str, what: str = what, total: int = total) -> None:
                progress(f"importing {day.name} {what}: {min(100, 100 * done // total)} % {name}".rstrip())

            reports.append(reader(environment, [source], progress=heard))
    finally:
        environment.close()
    return reports


#: ``rank_suspects``' verdict line when one service stands out (``tools/suspects.py`` writes it).
_STANDS_OUT = re.compile(r"^verdict: (?P<service>\S+) stands out \(", re.MULTILINE)


def decided_service(invocations: Sequence[InvocationRecord]) -> str | None:
    """The service the session's last culprit search says stands out (the answer follows the
    last survey: the focus may run it again for the moment chosen); None when none does."""
    surveys = [i for i in invocations if i.tool_name == "rank_suspects" and i.status == "ok" and i.output]
    found = _STANDS_OUT.search(surveys[-1].output or "") if surveys else None
    return found.group("service") if found else None


def veridiag_answers(day: NezhaDay, faults: list[Fault], progress: Progress) -> list[CaseScore]:
    """Each fault's question through the real pipeline (offline engine, in process) on a home
    built from ``day``; the answer read back as the services it names and its confirmed wrong
    origins. A failed session scores as naming nothing, with its error."""
    services = day.services
    scores = []
    with tempfile.TemporaryDirectory(prefix="veridiag-rca-") as folder:
        settings = home_settings(Path(folder))
        build_home(day, settings, progress)
        assembly = assemble(settings)
        try:
            for index, fault in enumerate(faults):
                question = question_for(fault, index)
                progress(f"veridiag on {day.name}: {index + 1}/{len(faults)}")
                started = time.perf_counter()
                result = assembly.pipeline.run(question, source="bench")
                seconds = round(time.perf_counter() - started, 3)
                if result.status != "completed" or result.record is None:
                    scores.append(score(fault, [], seconds=seconds, error=result.error, question=question))
                    continue
                composer_input = result.record.verifier_evaluation.composer_input
                claims = composer_input.allowed_claims if composer_input else []
                scores.append(
                    score(
                        fault,
                        answer_services(result.answer, services),
                        seconds=seconds,
                        wrong_origin_confirmed=len(wrong_origins(claims, services, fault.culprit)),
                        question=question,
                        decided=decided_service(assembly.store.list_invocations(result.session_id)),
                    )
                )
        finally:
            assembly.close()
    return scores
