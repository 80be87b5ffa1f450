"""The input limits table of docs/formats.md ("Limits") says what the code enforces: each
row's number is the value of the constant the row names, read from the code."""

from __future__ import annotations

import importlib
import re

from builders import ROOT

UNITS = {"MiB": 1 << 20, "KiB": 1 << 10, "levels": 1, "values": 1}


def limits_table() -> list[tuple[str, str, str]]:
    """(what, limit, constant) of each row of the table under "### Limits"."""
    text = (ROOT / "docs/formats.md").read_text(encoding="utf-8")
    section = text.split("### Limits", 1)[1].split("\n#", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")][1:]  # after the header
    return [tuple(cell.strip() for cell in row.strip("|").split("|")[:3])  # type: ignore[misc]
            for row in rows]


def number(limit: str) -> int:
    """``16 MiB`` → 16,777,216; ``100,000 values`` → 100,000; ``64 levels`` → 64."""
    match = re.fullmatch(r"([\d,]+) (\w+)", limit)
    assert match, limit
    return int(match[1].replace(",", "")) * UNITS[match[2]]


def test_number_reads_the_table_units() -> None:
    assert number("16 MiB") == 16 * 1024 * 1024
    assert number("1 MiB") == 1_048_576
    assert number("100,000 values") == 100_000
    assert number("64 levels") == 64


def test_every_limit_in_the_table_is_the_constant_it_names() -> None:
    rows = limits_table()
    assert len(rows) == 6
    for what, limit, constant in rows:
        module, _, name = constant.strip("`").rpartition(".")
        value = getattr(importlib.import_module(module), name)
        assert value == number(limit), (what, limit, constant, value)


def test_the_table_names_every_limit_of_the_readers() -> None:
    """Each MAX_ constant of the readers (jsonio, the document loader, the endpoint) has
    its row: a new limit is documented."""
    named = {row[2].strip("`") for row in limits_table()}
    for module in ("ragassay.jsonio", "ragassay.ingest.loaders", "ragassay.endpoint"):
        found = {f"{module}.{n}" for n in vars(importlib.import_module(module))
                 if n.startswith("MAX_")}
        assert found <= named, found - named
