"""Reading a YAML config with file:line:field errors and its limits (docs/formats.md,
"Limits"): a file of at most :data:`MAX_CONFIG_BYTES`, nested at most
:data:`~ragassay.jsonio.MAX_DEPTH` levels, each key named once, and aliases that expand to at
most :data:`MAX_YAML_VALUES` values and never refer to themselves (a "billion laughs" file is
refused, not expanded)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from . import jsonio
from .errors import InputError
from .jsonio import decode_text, read_limited

MAX_CONFIG_BYTES = 1024 * 1024  # a config is a few KiB
MAX_YAML_VALUES = 100_000  # values of a YAML document with its aliases expanded


def _yaml_depth(text: str, path: Path) -> None:
    """Refuse nesting deeper than :data:`~ragassay.jsonio.MAX_DEPTH` before PyYAML composes the
    document (its composer recurses); the parser's events are read one at a time, without
    recursion."""
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > jsonio.MAX_DEPTH:
                raise InputError(path, f"YAML nested deeper than {jsonio.MAX_DEPTH} levels (the "
                                 "limit ragassay reads)", line=event.start_mark.line + 1)
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


def _yaml_expansion(root: yaml.Node, path: Path) -> None:
    """Refuse aliases that refer to themselves (``a: &a [*a]``), or that expand the
    document to more than :data:`MAX_YAML_VALUES` values or
    :data:`~ragassay.jsonio.MAX_DEPTH` levels (a "billion laughs": ten aliases of ten aliases
    of ... ). Each node is measured once."""
    measured: dict[int, tuple[int, int]] = {}  # node → (values, levels) when expanded
    open_nodes: set[int] = set()

    def measure(node: yaml.Node, depth: int) -> tuple[int, int]:
        line = node.start_mark.line + 1
        if id(node) in open_nodes:
            raise InputError(path, "recursive YAML alias (an anchor used inside itself)",
                             line=line)
        if id(node) not in measured:
            if depth > jsonio.MAX_DEPTH:
                raise InputError(path, f"YAML nested deeper than {jsonio.MAX_DEPTH} levels "
                                 "with its aliases expanded", line=line)
            open_nodes.add(id(node))
            parts = [measure(child, depth + 1) for child in _children(node)]
            open_nodes.discard(id(node))
            measured[id(node)] = (1 + sum(p[0] for p in parts),
                                  1 + max((p[1] for p in parts), default=0))
        values, levels = measured[id(node)]
        if values > MAX_YAML_VALUES:
            raise InputError(path, f"YAML aliases expand to more than {MAX_YAML_VALUES:,} "
                             "values (aliases of aliases); write the values out", line=line)
        if depth + levels - 1 > jsonio.MAX_DEPTH:
            raise InputError(path, f"YAML nested deeper than {jsonio.MAX_DEPTH} levels with its "
                             "aliases expanded", line=line)
        return values, levels

    measure(root, 1)


def _duplicate_keys(loader: yaml.SafeLoader, node: yaml.Node, path: Path, prefix: str,
                    seen: set[int] | None = None) -> None:
    """Refuse a mapping that names a key twice (PyYAML would keep the last silently). A node
    reached again through an alias is checked once."""
    seen = set() if seen is None else seen
    if id(node) in seen:
        return
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        first: dict[Any, int] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *defaults`
                _duplicate_keys(loader, value_node, path, prefix, seen)
                continue
            key = loader.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            name = f"{prefix}{key}"
            try:
                if key in first:
                    raise InputError(path, f"duplicate key {key!r} (first on line "
                                     f"{first[key]}); YAML would keep only the last",
                                     line=line, field=name)
                first[key] = line
            except TypeError:  # an unhashable key: PyYAML refuses it when constructing
                pass
            _duplicate_keys(loader, value_node, path, name + ".", seen)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _duplicate_keys(loader, item, path, f"{prefix}{i}.", seen)


def read_yaml(path: str | Path) -> dict[str, Any]:
    """Read a YAML mapping, with the line of a syntax error, of a key given twice
    (``file:line: field 'pipeline.top_k': duplicate key``) or of a byte that is not UTF-8. A
    UTF-8 byte order mark is accepted. The limits: :data:`MAX_CONFIG_BYTES`,
    :data:`~ragassay.jsonio.MAX_DEPTH`, :data:`MAX_YAML_VALUES`, no recursive alias."""
    p = Path(path)
    text = decode_text(read_limited(p, MAX_CONFIG_BYTES, "config file"), p)
    loader = yaml.SafeLoader(text)
    try:
        _yaml_depth(text, p)
        node = loader.get_single_node()
        if node is not None:
            _yaml_expansion(node, p)
            _duplicate_keys(loader, node, p, "")
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise InputError(p, f"malformed YAML ({getattr(exc, 'problem', exc)})", line=line) from None
    finally:
        loader.dispose()
    if not isinstance(data, dict):
        raise InputError(p, "expected a mapping at the top level")
    return data
