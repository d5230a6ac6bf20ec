"""The deterministic Gatekeeper (docs/spec §9–§12): catches hallucinated citations without a model.

Never imports the store, tools, agents or an LLM library (docs/DESIGN.md §9).
"""

from veridiag.gatekeeper.engine import Gatekeeper, normalize_output
from veridiag.gatekeeper.matching import AnchoredMatcher, ExcerptMatcher, SequenceMatcherBaseline
from veridiag.gatekeeper.registry import GatekeeperRule, register, registered_rule_ids
from veridiag.gatekeeper.ruleset import RuleMetadata, RuleSet, RulesetError, bundled_ruleset, load_ruleset

__all__ = [
    "AnchoredMatcher",
    "ExcerptMatcher",
    "Gatekeeper",
    "GatekeeperRule",
    "RuleMetadata",
    "RuleSet",
    "RulesetError",
    "SequenceMatcherBaseline",
    "bundled_ruleset",
    "load_ruleset",
    "normalize_output",
    "register",
    "registered_rule_ids",
]
