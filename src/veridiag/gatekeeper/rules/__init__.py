"""Built-in Gatekeeper rules; importing this package registers them."""

from veridiag.gatekeeper.rules import (
    adopted_assertion,
    entity_grounding,
    evidence_utilization,
    excerpt_similarity,
    hallucination_phrases,
    instruction_language,
    invocation_ref,
    root_cause_support,
    schema,
    stated_content,
)

__all__ = [
    "adopted_assertion",
    "entity_grounding",
    "evidence_utilization",
    "excerpt_similarity",
    "hallucination_phrases",
    "instruction_language",
    "invocation_ref",
    "root_cause_support",
    "schema",
    "stated_content",
]
