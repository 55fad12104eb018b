"""JSON (orjson) and YAML, plus body parsers that see duplicate keys.

Request bodies are parsed with a parser that records duplicate keys (kube's strict
decoding reports them); everything else uses orjson.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import orjson
import yaml

from platform_api.codec.bounds import (
    BodyError,
    as_interface_values,
    check_json_depth,
    check_yaml_aliases,
    check_yaml_events,
    parse_float,
    parse_int,
    wide_number,
)
from platform_api.codec.goyaml import STR, go_int, go_tag
from platform_api.codec.jsonsyntax import END, syntax_error
from platform_api.gotext import YAML_MAP, format_float, go_syntax
from platform_api.validation.field import go_quote

try:  # libyaml is in the PyYAML wheels; fall back to the pure-Python class if absent
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

# id(dict) -> the keys a dict of one parsed body held twice, each with how many distinct
# keys had come before the repeat (kube's strict decoder reports it at that point).
Duplicates = dict[int, list[tuple[str, int]]]


def loads(data: bytes | str) -> Any:
    return orjson.loads(data)


class _NotJSON(ValueError):
    """NaN or Infinity, which Python's parser takes and Go's refuses."""


def _reject_constant(name: str) -> Any:
    raise _NotJSON(name)


def parse_json(
    data: bytes, unstructured: bool = False, v1_errors: bool = False
) -> tuple[Any, Duplicates]:
    """A JSON request body, bounded in depth, with Go's leniency: invalid UTF-8 and lone
    surrogates become U+FFFD, numbers past float64 keep their text (``OverflowFloat``).
    ``unstructured`` decodes as Go does into interface{} values: integers wider than
    int64 become floats, and a number past float64 is refused.  Syntax errors are worded
    as Go's encoding/json words them, or (``v1_errors``) as its v1 scanner does."""
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

    check_json_depth(data)
    fast = _parse_plain(data)
    if fast is not None:
        return fast, {}
    text = data.decode("utf-8", "replace")
    try:
        value = json.loads(
            text,
            object_pairs_hook=pairs,
            parse_constant=_reject_constant,
            parse_float=parse_float,
            parse_int=parse_int,
        )
    except (json.JSONDecodeError, _NotJSON):
        raise BodyError(syntax_error(data, v1_errors) or END) from None
    if unstructured and isinstance(value, dict | list):
        as_interface_values(data, value)
    if _SURROGATE_ESCAPE.search(data):
        value = _without_surrogates(value)
    return value, duplicates


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
# Every string token, and whether it is an object key (followed by a colon): scanning
# string by string keeps quotes inside strings from being read as token starts.
_STRING_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"(\s*:)?')


def _parse_plain(data: bytes) -> Any:
    """The common body, parsed by orjson (15x the stdlib parser), or None when the body
    needs the careful parser: anything orjson refuses (its error texts are not Go's),
    numbers past int64 or float64, surrogate escapes, or a key held twice."""
    if wide_number(data) or _SURROGATE_ESCAPE.search(data):
        return None
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if _has_duplicate_key(data, value):
        return None  # the careful parser records where
    return value


def _has_duplicate_key(data: bytes, value: Any) -> bool:
    """Whether the text holds more keys than orjson kept.  Without a backslash every
    quote in valid JSON opens or closes a string, so counting quotes (in C) counts the
    text's strings, keys and values; otherwise the string tokens are scanned (~5x the
    cost), and only keys are compared."""
    keys, strings = _counts(value)
    if b"\\" not in data:
        return data.count(b'"') != 2 * (keys + strings)
    tokens = _STRING_TOKEN.findall(data)
    return len(tokens) - tokens.count(b"") != keys


def _counts(value: Any) -> tuple[int, int]:
    """The keys and the string values in a decoded JSON value."""
    keys, strings, stack = 0, 0, [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            keys += len(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            strings += 1
    return keys, strings


_SURROGATE = re.compile("[\ud800-\udfff]")


def _fix(text: str) -> str:
    return _SURROGATE.sub("\ufffd", text)


def _without_surrogates(value: Any) -> Any:
    """Go decodes an unpaired surrogate escape as U+FFFD; Python keeps it, and orjson
    cannot encode it.  Iterative, like every walk over a body."""
    if isinstance(value, str):
        return _fix(value)
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key in list(item):
                child = item.pop(key)
                item[_fix(key)] = _fix(child) if isinstance(child, str) else child
                stack.append(child)
        elif isinstance(item, list):
            for i, child in enumerate(item):
                if isinstance(child, str):
                    item[i] = _fix(child)
                stack.append(child)
    return value


class _DuplicateAwareLoader(_Loader):
    """A safe loader whose mappings record duplicate keys instead of silently overwriting,
    and that builds what go-yaml v2 plus sigs.k8s.io/yaml build: unknown tags decode by
    node kind, keys become strings, a null or collection key is refused."""

    duplicates: Duplicates
    # YAML 1.1 as go-yaml v2 reads it: y and n are booleans too.
    bool_values = {**_Loader.bool_values, "y": True, "n": False}

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        """A plain scalar's type as go-yaml v2's resolver decides it: ``0o17`` and ``1e3``
        are numbers, ``12:30:00`` and a hex number past uint64 are strings."""
        if kind is yaml.ScalarNode and implicit[0]:
            # go-yaml's decoder takes a plain << as a merge key, though it resolves a str
            return "tag:yaml.org,2002:merge" if value == "<<" else go_tag(value)
        return super().resolve(kind, value, implicit)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        self.flatten_mapping(node)
        out: dict[Any, Any] = {}
        dups: list[tuple[str, int]] = []
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.MappingNode | yaml.SequenceNode):
                shown = go_syntax(self.key_value(key_node), map_type=YAML_MAP)
                raise BodyError(f"yaml: invalid map key: {shown}", bare=True)
            key = _json_key(self.construct_object(key_node, deep=True), value_node)
            if key in out:
                dups.append((key, len(out)))
            out[key] = self.construct_object(value_node, deep=True)
        if dups:
            self.duplicates[id(out)] = dups
        return out

    def key_value(self, node: yaml.Node) -> Any:
        """A collection used as a key, as go-yaml decodes it into interface{}: its own
        keys keep their types (an invalid one among them is refused first)."""
        if isinstance(node, yaml.SequenceNode):
            return [self.key_value(item) for item in node.value]
        if not isinstance(node, yaml.MappingNode):
            return self.construct_object(node, deep=True)
        out = {}
        for key_node, value_node in node.value:
            key = self.key_value(key_node)
            if isinstance(key, dict | list):
                shown = go_syntax(key, map_type=YAML_MAP)
                raise BodyError(f"yaml: invalid map key: {shown}", bare=True)
            out[key] = self.key_value(value_node)
        return out

    def construct_by_kind(self, node: yaml.Node) -> Any:
        if isinstance(node, yaml.MappingNode):
            return self.construct_mapping(node, deep=True)
        if isinstance(node, yaml.SequenceNode):
            return self.construct_sequence(node, deep=True)
        return self.construct_scalar(node)  # type: ignore[arg-type]

    def construct_binary_text(self, node: yaml.ScalarNode) -> str:
        raw: bytes = self.construct_yaml_binary(node)
        return raw.decode("utf-8", "replace")


def _json_key(key: Any, value_node: yaml.Node) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        value = getattr(value_node, "value", "")
        shown = go_quote(value) if isinstance(value, str) else "<nil>"
        raise BodyError(
            f"unsupported map key of type: %!s(<nil>), key: <nil>, value: {shown}", bare=True
        )
    if isinstance(key, float):  # sigs.k8s.io/yaml formats it with strconv 'g'
        return format_float(key)
    return str(key)


def _typed_scalar(short: str, build: Any) -> Any:
    """A constructor for an explicitly typed scalar that refuses, as go-yaml does, text
    that is not of the type (``yaml: cannot decode !!str `abc` as a !!int``)."""

    def construct(loader: _DuplicateAwareLoader, node: yaml.ScalarNode) -> Any:
        try:
            return build(loader, node)
        except BodyError:
            raise
        except (ValueError, TypeError, yaml.YAMLError):
            raise BodyError(
                f"yaml: cannot decode !!str `{node.value}` as a {short}", bare=True
            ) from None

    return construct


def _json_float(loader: _DuplicateAwareLoader, node: yaml.ScalarNode) -> Any:
    """sigs.k8s.io/yaml goes through JSON, which has no NaN or infinity; go-yaml leaves a
    number past float64 (``1.0e400``) a string."""
    value = loader.construct_yaml_float(node)
    if math.isnan(value):
        raise BodyError("json: unsupported value: NaN", bare=True)
    if math.isinf(value):
        if "inf" not in node.value.lower():
            return node.value
        raise BodyError(f"json: unsupported value: {'-' if value < 0 else '+'}Inf", bare=True)
    return value


def _go_int(loader: _DuplicateAwareLoader, node: yaml.ScalarNode) -> Any:
    """An integer as go-yaml reads it (Go's literal forms, within int64 or uint64)."""
    return go_int(str(node.value))


_L = _DuplicateAwareLoader
_L.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _L.construct_mapping)
# YAML timestamps stay strings, as sigs.k8s.io/yaml converts YAML to JSON first.
_L.add_constructor("tag:yaml.org,2002:timestamp", _L.construct_yaml_str)  # type: ignore[type-var]
_L.add_constructor("tag:yaml.org,2002:binary", _L.construct_binary_text)
_L.add_constructor("tag:yaml.org,2002:int", _typed_scalar("!!int", _go_int))
_L.add_constructor("tag:yaml.org,2002:float", _typed_scalar("!!float", _json_float))
_L.add_constructor("tag:yaml.org,2002:bool", _typed_scalar("!!bool", _Loader.construct_yaml_bool))
_L.add_constructor(None, _L.construct_by_kind)  # type: ignore[arg-type]


def parse_yaml(data: bytes) -> tuple[Any, Duplicates]:
    """The first document of a YAML body, bounded in depth and alias expansion before it
    is built (go-yaml decodes the first document and ignores the rest)."""
    check_yaml_events(data, _Loader)
    loader = _DuplicateAwareLoader(data)
    loader.duplicates = {}
    try:
        node = loader.get_node() if loader.check_node() else None
        if node is None:
            return None, loader.duplicates
        if b"*" in data:  # no alias, nothing to expand
            check_yaml_aliases(node)
        return _sorted_maps(loader.construct_document(node)), loader.duplicates
    except yaml.YAMLError as e:
        raise _go_yaml_error(e, data) from e
    finally:
        loader.dispose()


def _sorted_maps(value: Any) -> Any:
    """Every mapping's keys in sorted order, in place: sigs.k8s.io/yaml hands kube's
    decoders the JSON of go-yaml's maps, which Go writes sorted, so of two wrongly typed
    fields kube names the one first in that order, not in the document's."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if len(item) > 1:
                items = sorted(item.items())
                item.clear()
                item.update(items)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return value


_ALIAS = re.compile(r"\*([0-9A-Za-z_-]*)")  # an anchor's characters, to both scanners


def _go_yaml_error(e: yaml.YAMLError, data: bytes) -> BodyError:
    """libyaml's problem as go-yaml (a port of it) words it: ``yaml: line N: problem``,
    the line 1-based for scanner errors, as go-yaml counts it for parser errors."""
    if isinstance(e, yaml.reader.ReaderError):
        return BodyError(f"yaml: {e.reason}", bare=True)
    marked = e if isinstance(e, yaml.MarkedYAMLError) else None
    if marked and marked.problem_mark and marked.problem == "found undefined alias":  # libyaml's
        found = _ALIAS.match(data.decode("utf-8", "replace"), marked.problem_mark.index)
        return BodyError(
            f"yaml: unknown anchor '{found[1] if found else ''}' referenced", bare=True
        )
    if (
        isinstance(e, yaml.MarkedYAMLError)
        and e.problem
        and not isinstance(e, yaml.constructor.ConstructorError)
    ):
        line = e.problem_mark.line if e.problem_mark is not None else 0
        if line and isinstance(e, yaml.scanner.ScannerError):
            line += 1
        elif not line and e.context_mark is not None:
            line = e.context_mark.line
        where = f"line {line}: " if line else ""
        return BodyError(f"yaml: {where}{e.problem}", bare=True)
    return BodyError(f"error converting YAML to JSON: {e}")


def duplicate_key_lines(data: bytes) -> list[str]:
    """yaml.v2's strict complaints about repeated keys, as kube reports them for YAML
    bodies and apply configurations (JSON is YAML too): ``line N: key "k" already set in
    map``, N the line of the repeat's *value*, found once that value is decoded (so a
    repeat inside it is reported first), keys compared as decoded (``y`` is ``true``)."""
    try:
        root = yaml.compose(data, Loader=_DuplicateAwareLoader)
    except yaml.YAMLError:
        return []
    found: list[str] = []
    # (node, None) decodes a node; (value, key) reports a repeated key after its value
    stack: list[tuple[yaml.Node, Any]] = [(root, None)] if root is not None else []
    while stack:
        node, repeated = stack.pop()
        if repeated is not None:
            found.append(f"line {node.start_mark.line + 1}: key {repeated} already set in map")
        elif isinstance(node, yaml.MappingNode):
            seen: set[Any] = set()
            steps: list[tuple[yaml.Node, Any]] = []
            for key_node, value_node in node.value:
                key = _key_identity(key_node)
                steps.append((value_node, None))
                if key in seen and key_node.tag != "tag:yaml.org,2002:merge":
                    steps.append((value_node, _shown_key(key)))
                seen.add(key)
            stack.extend(reversed(steps))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, None) for item in reversed(node.value))
    return found


def _key_identity(node: yaml.Node) -> Any:
    """A scalar key as go-yaml decodes it, to compare (collections are refused later)."""
    if not isinstance(node, yaml.ScalarNode):
        return ("", id(node))
    if node.tag == _BOOL_TAG:  # the loader's words, go-yaml's y and n among them
        return ("bool", _DuplicateAwareLoader.bool_values.get(node.value.lower(), False))
    if node.tag == _INT_TAG:
        try:
            return ("int", go_int(node.value))
        except (ValueError, BodyError):
            return ("str", node.value)
    if node.tag == _NULL_TAG:
        return ("null", None)
    return ("str" if node.tag == STR else node.tag, node.value)


def _shown_key(key: tuple[str, Any]) -> str:
    """``%#v`` of the decoded key."""
    kind, value = key
    if kind == "null":
        return "<nil>"
    if kind in ("bool", "int"):
        return go_syntax(value)
    return go_quote(str(value))


_BOOL_TAG, _INT_TAG = "tag:yaml.org,2002:bool", "tag:yaml.org,2002:int"
_NULL_TAG = "tag:yaml.org,2002:null"
