"""Command-line interface (typer + rich): ``veridiag --help``."""
