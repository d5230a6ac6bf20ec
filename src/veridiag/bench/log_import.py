"""Bulk log import benchmark (issue 15): 10 M lines through ``veridiag data import-logs``.

Each import runs the real command in a child process on a fresh store, so the time is what a
user waits for (start-up, parsing, templates, the full-text index, the commit) and the peak RSS
is the importing process's alone: the child writes its own ``VmHWM`` on the way out, because
``os.wait4``'s ``ru_maxrss`` keeps the forking process's peak across ``exec`` (every import,
10 lines or 10 M, reported this benchmark's own 221 MB). A tenth of the file and a 10-line file
are imported the same way first: streaming means the peak barely moves from a tenth of the
lines to all of them, and the 10-line run is the process's fixed cost.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel

from veridiag.bench.tools import log_lines
from veridiag.ingest.importers import ImportReport

# ``python -c _WITH_PEAK FILE ARGS…`` runs ``veridiag ARGS…`` and, once the command has finished,
# writes the process's peak resident set (kB, from Linux's /proc) to FILE.
_WITH_PEAK = """
import atexit, sys
target = sys.argv.pop(1)
def peak():
    with open('/proc/self/status') as status, open(target, 'w') as out:
        out.write(next(line.split()[1] for line in status if line.startswith('VmHWM:')))
atexit.register(peak)
sys.argv[0] = 'veridiag'
from veridiag.cli.app import main
main()
"""


class ChildImport(BaseModel):
    """One ``import-logs`` run in a child process: its ``--json`` report, wall time, peak RSS."""

    report: ImportReport
    seconds: float
    rss_mb: float


class LogImportBench(BaseModel):
    """The 10 M line import (``import_10m_*`` in the ``tools`` report): the whole file, a tenth of
    it, and a 10-line file (the process's fixed cost)."""

    import_10m_lines: int
    import_10m_seconds: float
    import_10m_rss_mb: float
    import_10m_lines_per_s: int
    import_10m_tenth_seconds: float
    import_10m_tenth_rss_mb: float
    import_10m_fixed_rss_mb: float


def import_in_child(log_file: Path, home: Path) -> ChildImport:
    """``veridiag data import-logs`` of ``log_file`` into a fresh store under ``home``: its
    report, wall seconds and peak RSS in MB."""
    home.mkdir(parents=True)
    (home / "none.yaml").write_text("{}\n", encoding="utf-8")  # no veridiag.yaml of the working directory
    env = {key: value for key, value in os.environ.items() if not key.startswith("VERIDIAG_")}
    env |= {
        "VERIDIAG_HOME": str(home),
        "VERIDIAG_CONFIG": str(home / "none.yaml"),
        "VERIDIAG_EMBEDDED__LOAD_DEMO": "false",
    }
    peak = home / "peak_kb"
    command = [sys.executable, "-c", _WITH_PEAK, str(peak), "data", "import-logs", str(log_file), "--service", "shop"]
    command.append("--json")
    out, err = home / "stdout", home / "stderr"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        started = time.perf_counter()
        returncode = subprocess.run(command, stdout=stdout, stderr=stderr, env=env, cwd=home, check=False).returncode
        seconds = time.perf_counter() - started
    if returncode != 0:
        raise RuntimeError(f"import-logs exited {returncode}: {err.read_text(errors='replace')[-2000:]}")
    report = ImportReport.model_validate_json(out.read_text())
    return ChildImport(report=report, seconds=seconds, rss_mb=int(peak.read_text()) / 1024)


def _head(source: Path, target: Path, lines: int) -> None:
    with source.open("rb") as reader, target.open("wb") as writer:
        writer.writelines(itertools.islice(reader, lines))


def run(lines: int = 10_000_000) -> LogImportBench:
    with tempfile.TemporaryDirectory(prefix="veridiag-bench-import-") as tmp:
        folder = Path(tmp)
        full, tenth, tiny = folder / "app.log", folder / "tenth.log", folder / "tiny.log"
        with full.open("w", encoding="utf-8") as handle:
            handle.writelines(log_lines(lines))
        _head(full, tenth, max(1, lines // 10))
        _head(full, tiny, 10)
        fixed = import_in_child(tiny, folder / "tiny")
        small = import_in_child(tenth, folder / "tenth")
        big = import_in_child(full, folder / "full")
    imported = big.report.imported
    if imported != lines:
        raise RuntimeError(f"imported {imported} of {lines} lines")
    return LogImportBench(
        import_10m_lines=imported,
        import_10m_seconds=round(big.seconds, 2),
        import_10m_rss_mb=round(big.rss_mb, 1),
        import_10m_lines_per_s=round(imported / big.seconds),
        import_10m_tenth_seconds=round(small.seconds, 2),
        import_10m_tenth_rss_mb=round(small.rss_mb, 1),
        import_10m_fixed_rss_mb=round(fixed.rss_mb, 1),
    )
