"""Helpers for embedders whose model weights ship inside a pip package.

Such a model needs no download, so it works offline and in CI, but its vectors belong to
one package release: the embedder records the installed version in its ``params`` and
refuses to embed queries for an index built with another release.
"""

from __future__ import annotations

from importlib import metadata


def installed_version(distribution: str, extra: str) -> str:
    """The installed version of ``distribution``; :class:`~ragassay.errors.MissingPackage`
    with the install line of the extra if absent (exit 2)."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        from ..errors import MissingPackage

        raise MissingPackage("index.embedder", distribution, extra, "this embedder") from None


def checked_version(distribution: str, extra: str, recorded: str | None) -> str:
    """The installed version, after checking it equals ``recorded`` (when given).

    A mismatch is a ``ValueError`` that says how to fix it: vectors of another release may
    differ, so queries would be compared with documents embedded by another model.
    """
    version = installed_version(distribution, extra)
    if recorded is not None and str(recorded) != version:
        raise ValueError(f"the index was embedded with {distribution} {recorded}, but "
                         f"{version} is installed; its vectors may differ: pip install "
                         f"'{distribution}=={recorded}', or rebuild the index with "
                         "`ragassay index`")
    return version
