"""The installed version of Blueprint."""

from __future__ import annotations

from functools import cache


@cache
def package_version() -> str:
    """The version the distribution was installed as; ``0.0.0`` in a source tree that never
    was. (importlib.metadata costs more to import than all of ``import blueprint``: it is
    imported only when asked.)"""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("blueprint-evals")
    except PackageNotFoundError:
        return "0.0.0"
