"""Text from the user's files and command line made harmless for a terminal: the one rule.

Ids, paths, field names, questions and server replies can carry escape sequences (``ESC [``
would recolour or move the cursor; OSC 8 would plant a link) or Unicode bidirectional
controls (U+202E would show ``evil‮txt.exe`` as ``evilexe.txt``). Every message, warning and
table cell ragassay prints passes through :func:`plain`; a run id (a folder name the user
later sees in ``ls``) holding one is refused (:func:`unsafe_chars`). The HTML pages (the
report, the comparison page, the review page of a generated set) show every text through
:func:`visible`: the same characters removed, its lines kept.
"""

from __future__ import annotations

import re

# C0/C1 control characters (ESC and CSI included), the Unicode line/paragraph separators,
# and the bidirectional embeddings, overrides, isolates and marks.
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069"
                    "\u200e\u200f\u061c]")
_NEWLINES = re.compile(r"\r\n|[\r\n\t]")
_LINE_BREAKS = re.compile("\r\n|[\r\u2028\u2029]")


def plain(text: object) -> str:
    """One line of text without control or bidi-control characters (tabs and newlines
    become spaces): ``plain("a\\x1b[31mb\\tc\\u202ed")`` is ``"a[31mb cd"``."""
    return UNSAFE.sub("", _NEWLINES.sub(" ", str(text)))


def visible(text: object) -> str:
    """Text for a page, where lines and tabs are harmless but a bidi override still reorders
    what a reader sees: :data:`UNSAFE` characters removed, every line break (``\\r\\n``,
    ``\\r``, U+2028, U+2029) written ``\\n``, tabs kept:
    ``visible("evil\\u202etxt.exe\\r\\nok")`` is ``"eviltxt.exe\\nok"``."""
    return UNSAFE.sub("", _LINE_BREAKS.sub("\n", str(text)))


def unsafe_chars(text: str) -> list[str]:
    """The unsafe characters of ``text`` named as code points (``["U+202E"]``), each once, in
    order of first appearance; tabs and newlines count as unsafe here."""
    found = [c for c in text if UNSAFE.match(c) or c in "\t\r\n"]
    return [f"U+{ord(c):04X}" for c in dict.fromkeys(found)]
