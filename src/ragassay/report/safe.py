"""User text made safe for the terminal and for Markdown.

Questions, topics, ids and answers come from the user's files. In the terminal they must not
be read as rich markup (``[/Monat]`` would crash a table, ``[link=...]`` would render) or
carry escape sequences or bidi controls (:func:`ragassay.termsafe.plain`); in ``summary.md``
they must not open HTML (``<script>``), links,
emphasis or new lines (a newline would inject a heading). The HTML report escapes with
``html.escape`` itself.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ..termsafe import plain

if TYPE_CHECKING:  # rich's tables are imported when a table is drawn, not at start-up
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

# The Markdown punctuation that could open code or emphasis, end a table cell, or close a
# link or image (``](`` / ``][``; a reference definition would need a line of its own, which
# user text never starts). ``<`` and ``&`` are HTML-escaped; ``_`` inside words, ``#``
# mid-line and a bracket of its own (``[0.5, 0.9]``) are harmless and stay readable.
_MD_SPECIAL = re.compile(r"([\\`*|]|\](?=[(\[]))")


def md(text: object) -> str:
    """``text`` as literal Markdown inline text: one line, HTML escaped, Markdown punctuation
    backslash-escaped, so it renders as written and opens no tag, link or heading."""
    return _MD_SPECIAL.sub(r"\\\1", html.escape(plain(text), quote=False))


def md_code(text: object) -> str:
    """``text`` as a Markdown code span (literal by definition), or as escaped text when it
    holds a backtick itself."""
    flat = plain(text)
    return f"`{flat}`" if "`" not in flat and flat.strip() else md(flat)


def cell(text: object) -> Text:
    """A terminal table cell that rich prints as written (no markup, no escape sequences)."""
    from rich.text import Text

    return Text(plain(text))


def table(title: str, header: Sequence[str], rows: Iterable[Sequence[object]], *,
          left: Iterable[str] = ()) -> Table:
    """A terminal table of literal cells; columns named in ``left`` are left-aligned, the
    others right-aligned (numbers). Nothing is cut: a number column is at least as wide as
    its widest number (its header may fold), and any cell too long for its column folds
    onto the next line instead of ending in an ellipsis."""
    from rich.cells import cell_len
    from rich.table import Table

    left_cols = set(left)
    cells = [[cell(c) for c in row] for row in rows]
    out = Table(title=plain(title), title_justify="left")
    for i, col in enumerate(header):
        number = col not in left_cols
        widest = max((cell_len(row[i].plain) for row in cells), default=0)
        out.add_column(plain(col), justify="right" if number else "left", overflow="fold",
                       min_width=widest if number else None)
    for row in cells:
        out.add_row(*row)
    return out


def _is_terminal(console: Console) -> bool:
    """Whether the console writes to a terminal: as its code says (``force_terminal``), else
    as the file itself says. (Rich's own test also believes ``FORCE_COLOR``, which CI sets
    for logs that are not a terminal's 80 columns.)"""
    forced = getattr(console, "_force_terminal", None)
    if forced is not None:
        return bool(forced)
    try:
        return bool(console.file.isatty())
    except (AttributeError, ValueError):
        return False


def _fits(console: Console, grid: Table) -> bool:
    """Whether the table can fit: every number column as wide as its widest number, every
    text column at least 8 characters (or its widest cell) wide."""
    from rich.measure import Measurement

    need = 0
    for col in grid.columns:
        if col.min_width is not None:  # a number column
            need += col.min_width
        else:
            widths = [Measurement.get(console, console.options, c).maximum
                      for c in [col.header, *col.cells]]
            need += min(max(widths, default=0), 8)
        need += 2  # cell padding
    return need + len(grid.columns) + 1 <= console.width  # the vertical rules


def _whole(rendered: str, grid: Table, width: int) -> bool:
    """Whether rich drew the table whole: its top rule is within the width and closed (no
    column cut off), and each number column is as wide as its widest number."""
    from rich.cells import cell_len
    from rich.text import Text

    for line in rendered.splitlines():
        top = Text.from_ansi(line).plain
        if top.startswith("┏"):
            break
    else:
        return False
    if cell_len(top) > width or not top.endswith("┓"):
        return False
    spans = top[1:-1].split("┳")
    return len(spans) == len(grid.columns) and all(
        col.min_width is None or len(span) - 2 >= col.min_width
        for span, col in zip(spans, grid.columns, strict=True))


def print_table(console: Console, title: str, header: Sequence[str],
                rows: Iterable[Sequence[object]], *, left: Iterable[str] = (),
                terminal: bool | None = None) -> None:
    """Print a table so that no cell is cut: a rich table on a terminal (``terminal``:
    whether ``console`` writes to one), else, or when the numbers would not fit the
    terminal's width, ``title`` and the table in the Markdown form of :func:`md_table`,
    which a CI log or a pipe keeps whole."""
    from rich.text import Text

    rows = [list(r) for r in rows]
    tty = _is_terminal(console) if terminal is None else terminal
    if tty:
        grid = table(title, header, rows, left=left)
        if _fits(console, grid):
            with console.capture() as drawn:
                console.print(grid)
            rendered = drawn.get()
            if _whole(rendered, grid, console.width):  # rich's layout checked, not assumed
                console.file.write(rendered)
                console.file.flush()
                return
    console.print(Text(f"{plain(title)}\n\n{md_table(header, rows)}\n"), soft_wrap=True,
                  highlight=False)


def md_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A Markdown table whose cells are literal text (see :func:`md`)."""
    lines = ["| " + " | ".join(md(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(md(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
