"""The two consoles of the command line: ``err`` (notes, warnings, progress, errors: stderr)
and ``out`` (tables, JSON: stdout).

The commands look them up as ``consoles.err`` / ``consoles.out`` when they run, so replacing
``ragassay.cli.consoles.out`` (a test does, for a wide console) reaches them all.
"""

from __future__ import annotations

from rich.console import Console

err = Console(stderr=True, soft_wrap=True, highlight=False)
out = Console()
