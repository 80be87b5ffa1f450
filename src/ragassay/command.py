"""The ``ragassay`` console command: ``trec-eval`` starts without typer, rich or pydantic.

``ragassay trec-eval`` goes straight to :func:`ragassay.trec_eval_cli.trec_eval_main`;
every other command (and ``ragassay --help``) goes to the typer application
:data:`ragassay.cli.app`, which registers ``trec-eval`` as a pass-through to the same
function.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> None:
    """The console script: ``trec-eval`` here, everything else through typer; the process
    exits after it (:func:`ragassay.collector.run_then_exit`)."""
    from .collector import run_then_exit

    run_then_exit(lambda: _command(list(sys.argv[1:] if argv is None else argv)))


def _command(args: list[str]) -> None:
    lead = int(args[:1] == ["--debug"])
    if args[lead:lead + 1] == ["trec-eval"]:
        if lead:
            os.environ["RAGASSAY_DEBUG"] = "1"
        from .trec_eval_cli import trec_eval_main

        raise SystemExit(trec_eval_main(args[lead + 1:]))
    from .cli import app

    app(args=args, prog_name="ragassay")
