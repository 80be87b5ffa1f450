"""What a path of the machine a file was made on looks like, to keep such paths out of the
project's files and of the pages its screenshots show.

    python scripts/machine_paths.py        # every text file tracked by git; exit 1 on a hit

A machine path is an absolute path under a folder that holds users' or temporary files
(:data:`MACHINE_PATH`: home folders on Linux and macOS, root's home, temporary folders,
the work folders of build machines, a Windows drive); an example path in the docs
would be one too, so docs use relative paths. A path inside a URL (``https://host/tmp/x``)
or a relative one (``data/tmp/x``) is not one. :data:`ALLOWED` lists the files whose machine
paths are examples, each with its reason (only the test's examples of the pattern); one that
holds none any more is reported, so the list only shrinks.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Not preceded by a name character, a dot, a tilde or a colon: not the path of a URL, of a
# relative path or of a home-relative one (those name no machine).
MACHINE_PATH = re.compile(
    r"(?<![\w.~:/-])/(?:home|root|tmp|work|Users|private/var|var/folders|var/tmp)/"
    r"|(?<![\w\\])[A-Za-z]:\\(?:\\)?(?:Users|Windows|Temp|tmp)\b")

# files (relative to the repository) whose machine paths are examples, not ours → why
ALLOWED: dict[str, str] = {
    "tests/integration/test_machine_paths.py": "hand-checked examples of a machine path",
}


def machine_paths(text: str, also: Iterable[str] = ()) -> list[str]:
    """The machine paths in ``text`` (each match of :data:`MACHINE_PATH`), and each of the
    literal strings ``also`` (the folders a page was built in) that occurs in it."""
    found = [m.group(0) for m in MACHINE_PATH.finditer(text)]
    return found + [a for a in also if a and a in text]


def tracked_text_files(root: Path = ROOT) -> list[Path]:
    """The files git tracks under ``root`` that are text (no NUL byte, UTF-8)."""
    names = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True,
                           check=True).stdout.decode("utf-8").split("\0")
    out = []
    for name in filter(None, names):
        path = root / name
        if not path.is_file():  # deleted in the working tree, not yet in the index
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        out.append(path)
    return out


def hits(root: Path = ROOT) -> list[str]:
    """``file:line: match`` for every machine path in the tracked text files but those of
    :data:`ALLOWED`, then every allowed file that holds none any more."""
    out, used = [], set()
    for path in tracked_text_files(root):
        rel = path.relative_to(root).as_posix()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for match in machine_paths(line):
                if rel in ALLOWED:
                    used.add(rel)
                else:
                    out.append(f"{rel}:{number}: {match}")
    out += [f"{rel}: allowed, but it holds no machine path any more; remove it from ALLOWED"
            for rel in sorted(set(ALLOWED) - used)]
    return out


if __name__ == "__main__":
    found = hits()
    print("\n".join(found) or "no machine path in the tracked files")
    sys.exit(1 if found else 0)
