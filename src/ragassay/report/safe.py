"""User text made safe for the terminal and for Markdown.

Questions, topics, ids and answers come from the user's files. In the terminal they must not
be read as rich markup (``[/Monat]`` would crash a table, ``[link=...]`` would render) or
carry escape sequences; in ``summary.md`` they must not open HTML (``<script>``), links,
emphasis or new lines (a newline would inject a heading). The HTML report escapes with
``html.escape`` itself.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence

from rich.table import Table
from rich.text import Text

# C0/C1 control characters (ESC included) and the Unicode line/paragraph separators.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")
_NEWLINES = re.compile(r"\r\n|[\r\n\t]")
# The Markdown punctuation that could open code or emphasis, end a table cell, or close a
# link or image (``](`` / ``][``; a reference definition would need a line of its own, which
# user text never starts). ``<`` and ``&`` are HTML-escaped; ``_`` inside words, ``#``
# mid-line and a bracket of its own (``[0.5, 0.9]``) are harmless and stay readable.
_MD_SPECIAL = re.compile(r"([\\`*|]|\](?=[(\[]))")


def plain(text: object) -> str:
    """One line of text without control characters (tabs and newlines become spaces)."""
    return _CONTROL.sub("", _NEWLINES.sub(" ", str(text)))


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
    return Text(plain(text))


def table(title: str, header: Sequence[str], rows: Iterable[Sequence[object]], *,
          left: Iterable[str] = ()) -> Table:
    """A terminal table of literal cells; columns named in ``left`` are left-aligned, the
    others right-aligned (numbers)."""
    left_cols = set(left)
    out = Table(title=plain(title), title_justify="left")
    for col in header:
        out.add_column(plain(col), justify="left" if col in left_cols else "right")
    for row in rows:
        out.add_row(*(cell(c) for c in row))
    return out


def md_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A Markdown table whose cells are literal text (see :func:`md`)."""
    lines = ["| " + " | ".join(md(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(md(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
