"""When a model's validator is built: on first use, for the models a diagnosis never validates.

pydantic builds a model's core schema, validator and serializer when its class is defined;
``veridiag ask`` imports the contracts it writes along with those only other commands read
(the audit chain, chat reports, the API's progress pages, a failed run's record). Those are
built when first used instead (``defer_build``), which any validation, dump or JSON schema
does, so they behave exactly as before (issue 15: start-up).
"""

from __future__ import annotations

from pydantic import ConfigDict

__all__ = ["ON_FIRST_USE"]

#: ``model_config`` of a model no diagnosis validates; merge it into one of its own
#: (``ConfigDict(**ON_FIRST_USE, frozen=True)``) when the model has one.
ON_FIRST_USE = ConfigDict(defer_build=True)
