"""The Protobuf field table, loaded from ``protobuf_fields.json`` beside this module.

The JSON is data only, written by ``scripts/gen_protobuf_fields.py`` from kube's
``generated.proto`` files (``upstreamVersion`` says which); it is never edited by hand.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import orjson

Row = tuple[str, int, str, int, str]  # JSON name, number, kind, flags, reference
Table = tuple[
    str,
    dict[str, tuple[Row, ...]],
    dict[tuple[str, str, str], str],
    frozenset[str],
    dict[str, dict[str, str]],
    dict[str, dict[str, str]],
]


def load(data: bytes) -> Table:
    """(upstream version, messages, kinds, list wrappers, Go types of named-type fields,
    Go names of fields not named as their JSON name capitalized) of a table's JSON text."""
    table: dict[str, Any] = orjson.loads(data)
    messages = {
        name: tuple((r[0], r[1], r[2], r[3], r[4]) for r in rows)
        for name, rows in table["messages"].items()
    }
    kinds = {(g, v, k): message for g, v, k, message in table["kinds"]}
    wrappers = frozenset(table["listWrappers"])
    go_types, go_names = table.get("goTypes", {}), table.get("goNames", {})
    return table["upstreamVersion"], messages, kinds, wrappers, go_types, go_names


UPSTREAM_VERSION, MESSAGES, KINDS, LIST_WRAPPERS, GO_TYPES, GO_NAMES = load(
    resources.files(__package__).joinpath("protobuf_fields.json").read_bytes()
)
