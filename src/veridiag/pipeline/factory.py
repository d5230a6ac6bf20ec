"""Assembles a working pipeline from settings: store, toolbox, engine roles, Gatekeeper."""

from __future__ import annotations

from dataclasses import dataclass

from veridiag.agents.engines import build_roles
from veridiag.config import Settings
from veridiag.gatekeeper import Gatekeeper, load_ruleset
from veridiag.pipeline.service import DiagnosisPipeline, PipelineOptions
from veridiag.store import SessionStore, open_store
from veridiag.tools.factory import build_toolbox, embedded_environment


@dataclass
class Assembly:
    store: SessionStore
    pipeline: DiagnosisPipeline
    engine: dict[str, str]
    gatekeeper: Gatekeeper


def assemble(settings: Settings) -> Assembly:
    """Everything ``veridiag ask`` (and the HTTP service) needs, from one settings object."""
    store = open_store(settings.store_url, stale_after=settings.session_timeout_seconds)
    toolbox = build_toolbox(settings)
    gatekeeper = Gatekeeper(load_ruleset(settings.gatekeeper.rules_file))
    grounding = gatekeeper.ruleset.get("claim.entity_grounding")
    services = list(grounding.params.get("knownServices", [])) if grounding else []
    roles = build_roles(settings, embedded_environment(settings), store, services)
    pipeline = DiagnosisPipeline(
        store, roles, gatekeeper=gatekeeper, toolbox=toolbox, options=PipelineOptions.from_settings(settings)
    )
    return Assembly(store=store, pipeline=pipeline, engine=roles.names, gatekeeper=gatekeeper)
