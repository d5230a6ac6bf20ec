"""``veridiag --help`` loads no store, migrations, web server, model client or Chinese tokenizer."""

from __future__ import annotations

import subprocess
import sys
from typing import get_args

from veridiag.cli import data
from veridiag.tools import importers

#: What a help text must not pay for (each costs 100–300 ms on this machine).
HEAVY = ("sqlalchemy.orm", "alembic", "fastapi", "pydantic_ai", "rjieba")


def test_help_imports_none_of_the_heavy_libraries() -> None:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "veridiag", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0 and "Usage" in done.stdout, done.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "veridiag.cli.app" in imported, "the importtime report was read"
    assert not [m for m in imported if m.split(".")[0] in HEAVY or m in HEAVY or m.startswith("sqlalchemy.orm")]


def test_the_cli_offers_the_metric_formats_the_importer_reads() -> None:
    assert get_args(data.MetricFormat) == get_args(importers.MetricFormat)
