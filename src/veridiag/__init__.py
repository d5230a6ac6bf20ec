"""veridiag — a diagnosis assistant that answers only with what the evidence supports.

The pipeline (see ARCHITECTURE.md): Executor evidence contract V2 → deterministic
Gatekeeper → Verifier claim checks → Composer.
"""

__version__ = "0.1.0"
