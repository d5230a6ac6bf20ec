"""``python -m veridiag``: the same command line as ``veridiag``."""

from veridiag.cli.app import main

main()
