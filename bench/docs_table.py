"""Write a benchmark's table into docs/benchmarks.md (the ``--write-docs`` flag of a script).

A table lives between ``<!-- begin bench/NAME.py -->`` and ``<!-- end bench/NAME.py -->``;
the block is replaced whole by the date, the machine, the load average, the command and the
new table, so re-measuring is one run of the script and never a hand edit. The text around
the block (what the figures mean, which targets are met) is left as it is: re-read it after
a re-measurement.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import shlex
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"


def machine() -> str:
    """One line: cores, memory, Python and the load average (1, 5, 15 minutes) now."""
    try:
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        memory = f", {pages / 2**30:.0f} GiB"
    except (ValueError, OSError, AttributeError):
        memory = ""
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return (f"{os.cpu_count()} cores{memory}, {platform.system()}, Python "
            f"{platform.python_version()}, load average {load} at the end")


def shown_argument(arg: str) -> str:
    """A command-line argument as the page shows it: an absolute path (the machine's own,
    such as ``--against``'s checkout) as ``<path>/`` and its last two parts."""
    path = Path(arg)
    if not path.is_absolute():
        return arg
    return "<path>/" + "/".join(path.parts[-2:])


def write(script: str, table: str, docs: Path = DOCS) -> None:
    """Replace the block of ``script`` (e.g. ``bench/scale.py``) in ``docs`` with ``table``.

    Raises SystemExit naming the marker when the page has no block for the script (add the
    two marker lines where the table belongs first).
    """
    begin, end = f"<!-- begin {script} -->", f"<!-- end {script} -->"
    text = docs.read_text(encoding="utf-8")
    if begin not in text or end not in text:
        raise SystemExit(f"{docs}: no '{begin}' ... '{end}' block to replace")
    head, rest = text.split(begin, 1)
    tail = rest.split(end, 1)[1]
    command = "python " + " ".join(shlex.quote(shown_argument(a))
                                   for a in [script, *sys.argv[1:]] if a != "--write-docs")
    body = (f"Measured {dt.date.today().isoformat()} on {machine()}:\n"
            f"`{command}`\n\n{table.strip()}")
    tmp = docs.with_suffix(".md.tmp")
    tmp.write_text(f"{head}{begin}\n{body}\n{end}{tail}", encoding="utf-8")
    tmp.replace(docs)  # never a half-written page
    print(f"wrote the table into {docs}")
