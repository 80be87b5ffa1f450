"""`ragassay init DIR`: a starter project, so that a first run works outside a clone."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from . import consoles
from .common import ForceOpt, literal, run_guarded

# the files of the starter project, in the order its README lists them
STARTER_FILES = ("README.md", "config.yaml", "questions.jsonl", "gold.jsonl", "chunks.jsonl",
                 "predictions.jsonl")


def starter_bytes() -> dict[str, bytes]:
    """The starter project's files (package data of ragassay: in a wheel as in a clone)."""
    from importlib import resources

    root = resources.files("ragassay") / "starter"
    return {name: (root / name).read_bytes() for name in STARTER_FILES}


def init(folder: Annotated[Path, typer.Argument(help="The project folder to create.")],
         force: ForceOpt = False) -> None:
    """Write a starter project: a config, a tiny example set (a German shop FAQ with
    another system's predictions) and a README line per file. Then:
    `ragassay run -c DIR/config.yaml`."""
    from ..atomic import FolderWriter, write_folder

    def fill(out: FolderWriter) -> None:
        for name, data in starter_bytes().items():
            out.bytes(name, data)

    def write() -> Path:
        return write_folder(folder, fill, force=force)

    dest = run_guarded(write)
    consoles.err.print(f"wrote a starter project to {literal(dest)} "
                  f"({', '.join(STARTER_FILES)}); next: ragassay run -c "
                  f"{literal(dest / 'config.yaml')} --run-id first")
