"""veridiag — a diagnosis assistant that answers only with what the evidence supports.

The pipeline (see ARCHITECTURE.md): Executor evidence contract V2 → deterministic
Gatekeeper → Verifier claim checks → Composer.
"""


def __getattr__(name: str) -> str:
    """``__version__``, read from the installed metadata (``pyproject.toml`` is the one place it
    is written) when first asked for: importing ``importlib.metadata`` costs ~55 ms that most
    uses of veridiag — ``veridiag --help`` among them — never need."""
    if name != "__version__":
        raise AttributeError(f"module 'veridiag' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("veridiag")
    except PackageNotFoundError:  # imported from a source tree that was never installed
        return "0+unknown"
