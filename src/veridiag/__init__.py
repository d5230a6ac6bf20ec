"""veridiag — a diagnosis assistant that answers only with what the evidence supports.

The pipeline (see ARCHITECTURE.md): Executor evidence contract V2 → deterministic
Gatekeeper → Verifier claim checks → Composer.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    #: Read from the installed metadata, so ``pyproject.toml`` is the one place it is written.
    __version__ = version("veridiag")
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"
