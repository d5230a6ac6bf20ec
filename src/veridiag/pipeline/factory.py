"""Assembles a working pipeline from settings: store, toolbox, engine roles, Gatekeeper."""

from __future__ import annotations

import multiprocessing
import sys
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import make_url

from veridiag.agents.engines import build_roles
from veridiag.config import Settings
from veridiag.gatekeeper import Gatekeeper, load_ruleset
from veridiag.gatekeeper.rules.entity_grounding import known_services
from veridiag.pipeline.service import DiagnosisPipeline, PipelineOptions
from veridiag.store import SessionStore, open_store
from veridiag.tools.backends.embedded import EmbeddedEnvironment
from veridiag.tools.catalogue import offline_environment
from veridiag.tools.factory import build_toolbox, embedded_environment


@dataclass
class Assembly:
    store: SessionStore
    pipeline: DiagnosisPipeline
    engine: dict[str, str]
    gatekeeper: Gatekeeper
    #: The embedded data the toolbox and the offline roles read (one set of connections).
    environment: EmbeddedEnvironment | None = None

    def close(self) -> None:
        """Close the store's and the embedded data's connections."""
        self.store.close()
        if self.pipeline.toolbox is not None:
            self.pipeline.toolbox.close()
        if self.environment is not None:
            self.environment.close()


def assemble(settings: Settings) -> Assembly:
    """Everything ``veridiag ask`` (and the HTTP service) needs, from one settings object."""
    store = open_store(settings.store_url, stale_after=settings.session_timeout_seconds)
    environment = embedded_environment(settings)
    toolbox = build_toolbox(settings, environment)
    gatekeeper = Gatekeeper(load_ruleset(settings.gatekeeper.rules_file))
    services = known_services(gatekeeper.ruleset)
    # The offline roles know the services the configured log store holds (ClickHouse) and the
    # trace server's (Jaeger, Tempo), not only the file's.
    roles = build_roles(settings, offline_environment(environment, toolbox.logs, toolbox.traces), store, services)
    pipeline = DiagnosisPipeline(
        store, roles, gatekeeper=gatekeeper, toolbox=toolbox, options=PipelineOptions.from_settings(settings)
    )
    return Assembly(store=store, pipeline=pipeline, engine=roles.names, gatekeeper=gatekeeper, environment=environment)


def build_home_apart(settings: Settings) -> bool:
    """Builds a new home — the store's schema, the demo's logs and metrics, the runbook index —
    in a short-lived child process, so that a long-running server does not keep what that
    one-time work loaded (migrations, the demo generator, the segmenter's dictionary: ~60 MB
    of a first start's resident memory, measured). A home already built is left alone; so is
    a failure, which the server's own ``assemble`` then meets and reports as usual. True when
    a child ran."""
    if not new_home(settings):
        return False
    child = multiprocessing.get_context("spawn").Process(
        target=_build_home, args=(settings,), name="veridiag-build-home", daemon=True
    )
    child.start()
    child.join()
    return True


def new_home(settings: Settings) -> bool:
    """The embedded environment's file, or a SQLite store's, is still to be created."""
    url = make_url(settings.store_url)
    store_file = url.database if url.get_backend_name() == "sqlite" else None
    new_store = bool(store_file) and store_file != ":memory:" and not Path(str(store_file)).expanduser().exists()
    return new_store or not settings.embedded_path.exists()


def _build_home(settings: Settings) -> None:
    try:
        assemble(settings).close()
    except Exception:  # the parent's assemble meets it again and reports it in one line
        sys.exit(1)
