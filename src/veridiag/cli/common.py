"""What every command shares: consoles, settings, one-line errors with exit status 2.

An expected failure — a missing or unreadable file, a read-only or damaged database, a bad
configuration, an unreachable server — is one ``error: …`` line on stderr and exit status 2,
whichever command met it: ``GuardedGroup`` turns those exceptions into that line, so no
command needs its own handler for them. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import gc
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.text import Text
from typer.core import TyperGroup

if TYPE_CHECKING:
    from veridiag.config import Settings

# Messages are never hard-wrapped (soft_wrap: a piped path or id stays on one line) and text is
# never read as rich markup or emoji codes (a file named a:cd:b stays so): style comes from
# Text objects and style=, never from the message.
out = Console(soft_wrap=True, markup=False, highlight=False, emoji=False)
err = Console(stderr=True, soft_wrap=True, markup=False, highlight=False, emoji=False)


def one_line(message: str) -> str:
    """Line breaks (YAML marks, driver messages) become spaces; nothing else changes."""
    return " ".join(part.strip() for part in message.splitlines() if part.strip())


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print ``error: message`` to stderr and return the Exit to raise."""
    err.print(Text("error:", style="bold red"), one_line(message))
    return typer.Exit(code)


def config_problem(exc: Exception) -> str:
    """A settings error in one line: each invalid field with its message, or the YAML mark."""
    import yaml  # only a failed settings load gets here: neither is imported for --help
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        return "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or 'settings'}: {error['msg']}" for error in exc.errors()
        )
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        mark = exc.problem_mark
        return f"{mark.name}: invalid YAML at line {mark.line + 1} column {mark.column + 1}: {exc.problem}"
    return f"invalid YAML: {exc}" if isinstance(exc, yaml.YAMLError) else str(exc)


#: The home (``VERIDIAG_HOME``) a command found missing when it read its settings: when the command
#: made it, ``GuardedGroup.invoke`` says so on stderr — a misspelt home is not silently a new one.
MISSING_HOME: ContextVar[Path | None] = ContextVar("veridiag_missing_home", default=None)


def settings() -> Settings:
    from veridiag.config import load_settings  # pydantic-settings: only for commands that read settings

    try:
        config = load_settings()
    except Exception as exc:  # invalid env/yaml values: say which
        raise fail(f"invalid configuration: {config_problem(exc)}") from None
    home = config.home.expanduser()
    if not home.exists():
        MISSING_HOME.set(home)
    return config


def note_new_home() -> None:
    """Say on stderr that the command made a new home where none was (the first run, or a
    ``VERIDIAG_HOME`` naming a folder that does not exist): its data is the demo or nothing."""
    home = MISSING_HOME.get()
    MISSING_HOME.set(None)
    if home is not None and home.exists():
        err.print(
            f"note: {home} did not exist: made a new veridiag home there "
            "(VERIDIAG_HOME names another; `veridiag data info` shows what it holds)"
        )


#: True when the command is the last thing its process does (set by ``veridiag.cli.app.main``,
#: the process entry point; not by a caller in the same process, such as tests).
PROCESS_ENDS: ContextVar[bool] = ContextVar("veridiag_process_ends", default=False)
#: True when the process entry point (``veridiag.__main__``) paused the collector while the
#: command line loaded and was parsed; ``GuardedGroup.invoke`` resumes it as the command starts.
COLLECTOR_PAUSED: ContextVar[bool] = ContextVar("veridiag_collector_paused", default=False)


@contextmanager
def started_once(*, collect: bool = False) -> Iterator[Callable[[], None]]:
    """For a command that builds its tools and then uses them (``ask``; ``serve`` and ``bench``
    for as long as they run): the collector is paused while it starts, and what it built is
    frozen (``gc.freeze``) when it calls the function yielded, so later collections skip it. A
    demo ``ask`` makes ~10⁵ long-lived objects and almost no cyclic garbage while starting; the
    collector's ~260 passes over them cost it a quarter of its CPU time, and the full pass at the
    interpreter's exit as much again (measured). A full pass walks every tracked object several
    times, and the ~1.4·10⁵ objects the imports leave are scattered over the heap: 120–220 ms a
    pass here, cache misses rather than any large container (perf: ``gc_collect_main`` walking
    its lists), which was the p99 spike of ``query_logs`` in a server or the tools bench
    (issue 15). ``collect``: one full pass just before freezing, for a process that runs for
    long — the start-up's garbage (~9·10⁴ objects with the collector paused) is freed, not kept
    frozen for the process's life. When the process ends after the command (``PROCESS_ENDS``)
    they stay frozen through that exit — the command closes what it opened itself, nothing waits
    for a collection to close it; otherwise they are thawed on leaving, and the caller collects
    as before."""
    enabled = gc.isenabled()

    def started() -> None:
        if collect:
            gc.unfreeze()  # the command line's start-up garbage too (frozen by ``GuardedGroup.invoke``)
            gc.collect()
        gc.freeze()
        if enabled:
            gc.enable()

    gc.disable()
    try:
        yield started
    finally:
        if not PROCESS_ENDS.get():
            gc.unfreeze()
        if enabled:
            gc.enable()


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")


def _where(kind: str) -> str:
    """Which database the settings point at (best effort: they were valid when the command ran)."""
    from veridiag.config import load_settings

    try:
        config = load_settings()
    except Exception:
        return ""
    if kind == "embedded":
        return f" {config.embedded_path}"
    from sqlalchemy.engine import make_url

    try:
        return " " + make_url(config.store_url).render_as_string(hide_password=True)
    except Exception:
        return ""


#: Exceptions that mean "this cannot work as configured or given", by module: a module that
#: was never imported cannot have raised its error, so none is imported just to check.
_EXPECTED = {
    "veridiag.store.database": "StoreError",
    "veridiag.tools.factory": "ConfigurationError",
    "veridiag.gatekeeper.ruleset": "RulesetError",
    "veridiag.agents.llm.providers": "LLMConfigError",
    "veridiag.ingest.importers": "ImportFailedError",
    "veridiag.tools.knowledge": "RunbookError",
    "veridiag.tools.demo": "DemoDataError",
    "veridiag.evals.fixtures": "FixtureError",
}


def _expected_types() -> tuple[type[BaseException], ...]:
    loaded = (getattr(sys.modules.get(module), name, None) for module, name in _EXPECTED.items())
    return tuple(kind for kind in loaded if isinstance(kind, type) and issubclass(kind, BaseException))


def describe(exc: BaseException) -> str | None:
    """One line for an expected failure; None for anything else (a bug keeps its traceback)."""
    if isinstance(exc, _expected_types()):
        return str(exc)
    # Looked up, not imported: a command that never opened the store has no SQLAlchemy error,
    # and ``--help`` should not pay for importing SQLAlchemy (or the store) to learn that.
    sqlalchemy_error = getattr(sys.modules.get("sqlalchemy.exc"), "SQLAlchemyError", None)
    if sqlalchemy_error is not None and isinstance(exc, sqlalchemy_error):  # only the store speaks SQLAlchemy
        from veridiag.store.database import database_hint

        original = getattr(exc, "orig", None) or exc
        message = one_line(str(original))
        return f"session store{_where('store')}: {message}{database_hint(message)}"
    # The embedded data (logs, metrics, runbooks) is plain sqlite3; unloaded, it raised nothing.
    sqlite3 = sys.modules.get("sqlite3")
    if sqlite3 is not None and isinstance(exc, sqlite3.Error):
        from veridiag.store.database import database_hint

        message = str(exc)
        return f"embedded data{_where('embedded')}: {message}{database_hint(message)}"
    if isinstance(exc, OSError):
        reason = exc.strerror or exc.__class__.__name__
        return f"{exc.filename}: {reason}" if exc.filename else f"{reason}: {exc}"
    return None


class GuardedGroup(TyperGroup):
    """The root command group: any command's expected failure becomes one ``error:`` line."""

    def invoke(self, ctx: Any) -> Any:  # typer's vendored click.Context (a private module)
        if COLLECTOR_PAUSED.get():  # what loading and parsing built is frozen, as ``started_once`` does
            COLLECTOR_PAUSED.set(False)
            gc.freeze()
            gc.enable()
        MISSING_HOME.set(None)
        try:
            done = super().invoke(ctx)
        except Exception as exc:  # typer's own Exit/Abort/usage errors are none of these: re-raised
            message = describe(exc)
            if message is None:
                raise
            raise fail(message) from None
        note_new_home()
        return done
