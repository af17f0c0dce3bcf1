"""Run the command line as ``python -m blueprint``."""

from blueprint.cli import main

main()
