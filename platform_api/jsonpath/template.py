"""A parsed JSONPath template: kube's ``JSONPath`` with ``FindResults`` and ``PrintResults``.

Parse once, evaluate per object.  Most templates in use (printer columns, selectable
fields) are a single chain of field names, ``{.status.replicas}``; those take a
direct path of dict lookups that gives what the general evaluator would.
"""

from __future__ import annotations

from typing import Any

from platform_api.jsonpath.evaluate import Run, find
from platform_api.jsonpath.gotext import NO_VALUE, marshal, marshal_indent, sprint
from platform_api.jsonpath.nodes import FieldNode, ListNode
from platform_api.jsonpath.parser import JSONPathError, parse_tree


def _field_chain(root: ListNode) -> tuple[str, ...] | None:
    """The keys of a template that is exactly ``{.a.b...}``, else None."""
    if len(root.nodes) != 1 or not isinstance(root.nodes[0], ListNode):
        return None
    keys = []
    for node in root.nodes[0].nodes:
        if not isinstance(node, FieldNode):
            return None
        keys.append(node.value)
    return tuple(keys) or None


class JSONPath:
    """A template such as ``{.status.conditions[?(@.type=="Ready")].status}``.

    ``allow_missing_keys`` makes a missing field an empty result instead of the error
    ``<key> is not found``; ``output_json`` makes ``print_results`` print one indented
    JSON array (kubectl's ``-o jsonpath-as-json``).
    """

    __slots__ = ("_chain", "allow_missing_keys", "output_json", "root", "template")

    def __init__(
        self, template: str, *, allow_missing_keys: bool = False, output_json: bool = False
    ) -> None:
        self.template = template
        self.root = parse_tree(template)
        self.allow_missing_keys = allow_missing_keys
        self.output_json = output_json
        self._chain = _field_chain(self.root)

    def __repr__(self) -> str:
        return f"JSONPath({self.template!r})"

    def find_results(self, data: Any) -> list[list[Any]]:
        """kube's ``FindResults``: the values of each text, action and range pass.

        Raises JSONPathError with kube's text.  A value can be ``NO_VALUE`` (kube's
        invalid value: ``{@}`` where the data is None).
        """
        if self._chain is None:
            return find(Run(self.allow_missing_keys), self.root.nodes, data)
        value = data
        for key in self._chain:
            if isinstance(value, dict) and key in value:
                value = value[key]
            elif self.allow_missing_keys:
                return [[]]
            else:
                raise JSONPathError(f"{key} is not found")
        return [[value]]

    def print_results(self, values: list[Any]) -> str:
        """kube's ``PrintResults``: maps and lists as JSON, other values as Go prints them."""
        if self.output_json:
            return marshal_indent([None if v is NO_VALUE else v for v in values]) + "\n"
        return " ".join(marshal(v) if isinstance(v, dict | list) else _text(v) for v in values)

    def execute(self, data: Any) -> str:
        """kube's ``Execute``: every result printed, concatenated."""
        return "".join(self.print_results(values) for values in self.find_results(data))


def _text(value: Any) -> str:
    if value is None:
        return "null"
    if value is NO_VALUE:
        return "<no value>"
    return sprint(value)


def parse(
    template: str, *, allow_missing_keys: bool = False, output_json: bool = False
) -> JSONPath:
    """Parse a template (text with ``{...}`` actions); JSONPathError with kube's text."""
    return JSONPath(template, allow_missing_keys=allow_missing_keys, output_json=output_json)
