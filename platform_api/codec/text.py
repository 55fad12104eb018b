"""JSON (orjson) and YAML, plus body parsers that see duplicate keys.

Request bodies are parsed with a parser that records duplicate keys (kube's strict
decoding reports them); everything else uses orjson.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
import yaml

from platform_api.validation.field import go_quote

try:  # libyaml is in the PyYAML wheels; fall back to the pure-Python classes if absent
    from yaml import CSafeDumper as _Dumper
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover
    from yaml import SafeDumper as _Dumper  # type: ignore[assignment]
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

# id(dict) -> the keys a dict of one parsed body held twice, each with how many distinct
# keys had come before the repeat (kube's strict decoder reports it at that point).
Duplicates = dict[int, list[tuple[str, int]]]


def dumps(obj: Any) -> bytes:
    return orjson.dumps(obj)


def loads(data: bytes | str) -> Any:
    return orjson.loads(data)


class BodyError(ValueError):
    """The body is not well-formed JSON or YAML; the text follows Go's wording."""


def _reject_constant(name: str) -> Any:
    raise BodyError(f"invalid character '{name[0]}' looking for beginning of value")


def parse_json(data: bytes) -> tuple[Any, Duplicates]:
    duplicates: Duplicates = {}

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        dups = None
        for key, value in items:
            if key in out:
                dups = dups or []
                dups.append((key, len(out)))
            out[key] = value
        if dups:
            duplicates[id(out)] = dups
        return out

    try:
        text = data.decode("utf-8")
        return json.loads(
            text, object_pairs_hook=pairs, parse_constant=_reject_constant
        ), duplicates
    except UnicodeDecodeError as e:
        raise BodyError("invalid UTF-8 in JSON body") from e
    except json.JSONDecodeError as e:
        raise BodyError(_go_json_message(e)) from e


def _go_json_message(e: json.JSONDecodeError) -> str:
    if e.pos >= len(e.doc):
        return "unexpected end of JSON input"
    char = e.doc[e.pos]
    if e.msg.startswith("Extra data"):
        return f"invalid character '{char}' after top-level value"
    if e.msg.startswith("Expecting property name"):
        return f"invalid character '{char}' looking for beginning of object key string"
    if e.msg.startswith("Expecting ',' delimiter") or e.msg.startswith("Expecting ':'"):
        return f"invalid character '{char}' after object key:value pair"
    return f"invalid character '{char}' looking for beginning of value"


class _DuplicateAwareLoader(_Loader):
    """A safe loader whose mappings record duplicate keys instead of silently overwriting."""

    duplicates: Duplicates

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        self.flatten_mapping(node)
        out: dict[Any, Any] = {}
        dups: list[tuple[str, int]] = []
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, str):
                key = str(key)
            if key in out:
                dups.append((key, len(out)))
            out[key] = self.construct_object(value_node, deep=True)
        if dups:
            self.duplicates[id(out)] = dups
        return out


_DuplicateAwareLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _DuplicateAwareLoader.construct_mapping
)
# YAML timestamps stay strings, as sigs.k8s.io/yaml converts YAML to JSON first.
_DuplicateAwareLoader.add_constructor(
    "tag:yaml.org,2002:timestamp",
    _DuplicateAwareLoader.construct_yaml_str,  # type: ignore[type-var]
)


def parse_yaml(data: bytes) -> tuple[Any, Duplicates]:
    loader = _DuplicateAwareLoader(data)
    loader.duplicates = {}
    try:
        return loader.get_single_data(), loader.duplicates
    except yaml.YAMLError as e:
        raise BodyError(f"error converting YAML to JSON: {e}") from e
    finally:
        loader.dispose()


def duplicate_key_lines(data: bytes) -> list[str]:
    """yaml.v2's strict complaints about repeated keys, in document order, as kube reports
    them for apply configurations (JSON is YAML too): ``line N: key "k" already set in map``,
    N the repeat's line."""
    try:
        root = yaml.compose(data, Loader=_Loader)
    except yaml.YAMLError:
        return []
    found: list[tuple[int, int, str]] = []
    stack = [root] if root is not None else []
    while stack:
        node = stack.pop()
        if isinstance(node, yaml.MappingNode):
            seen: set[str] = set()
            for key_node, value_node in node.value:
                key = str(key_node.value)
                if key in seen:
                    mark = key_node.start_mark
                    found.append((mark.line, mark.column, key))
                seen.add(key)
                stack.append(value_node)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return [
        f"line {line + 1}: key {go_quote(key)} already set in map" for line, _, key in sorted(found)
    ]


def yaml_dumps(obj: Any) -> bytes:
    text: str = yaml.dump(obj, Dumper=_Dumper, default_flow_style=False, sort_keys=True)
    return text.encode()
