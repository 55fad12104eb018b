"""The parse tree of a JSONPath template, as client-go's ``util/jsonpath`` builds it.

A parsed template is a ``ListNode`` whose children are ``TextNode`` (literal text
outside braces) and one ``ListNode`` per ``{...}`` action.  The tree is built once
and only read afterwards, so one parsed template serves any number of evaluations.
Each node's ``str()`` is kube's ``Node.String()``, which lets the parser be checked
against kube's own parser cases node by node.
"""

from __future__ import annotations

from dataclasses import dataclass, field


def _go_bool(value: bool) -> str:
    return "true" if value else "false"


class Node:
    """Base of every node; ``TYPE`` is kube's ``NodeType`` name."""

    __slots__ = ()
    TYPE = "Node"

    def __str__(self) -> str:
        return self.TYPE


@dataclass(slots=True, eq=False)
class ListNode(Node):
    """A sequence of nodes evaluated one after the other, each on the previous' output."""

    nodes: list[Node] = field(default_factory=list)
    TYPE = "NodeList"


@dataclass(slots=True, eq=False)
class TextNode(Node):
    """Literal text (outside braces, or a quoted string inside them)."""

    text: str
    TYPE = "NodeText"

    def __str__(self) -> str:
        return f"{self.TYPE}: {self.text}"


@dataclass(slots=True, eq=False)
class FieldNode(Node):
    """A map key (``.name`` or ``['name']``)."""

    value: str
    TYPE = "NodeField"

    def __str__(self) -> str:
        return f"{self.TYPE}: {self.value}"


@dataclass(slots=True, eq=False)
class IdentifierNode(Node):
    """A keyword: ``range`` and ``end`` evaluate, anything else is an error at run time."""

    name: str
    TYPE = "NodeIdentifier"

    def __str__(self) -> str:
        return f"{self.TYPE}: {self.name}"


@dataclass(slots=True, frozen=True)
class Param:
    """One of an array selection's start, end and step: ``known`` when written."""

    value: int = 0
    known: bool = False
    derived: bool = False  # an end computed from a single index (``[i]`` is ``[i:i+1]``)

    def __str__(self) -> str:
        return f"{{{self.value} {_go_bool(self.known)} {_go_bool(self.derived)}}}"


@dataclass(slots=True, eq=False)
class ArrayNode(Node):
    """An index or slice ``[start:end:step]``; ``[*]`` leaves all three unknown."""

    start: Param
    end: Param
    step: Param
    TYPE = "NodeArray"

    def __str__(self) -> str:
        return f"{self.TYPE}: [{self.start} {self.end} {self.step}]"


@dataclass(slots=True, eq=False)
class FilterNode(Node):
    """``[?(left op right)]``; ``op`` is ``exists`` for ``[?(left)]`` (``right`` empty)."""

    left: ListNode
    right: ListNode
    operator: str
    TYPE = "NodeFilter"

    def __str__(self) -> str:
        return f"{self.TYPE}: {self.left} {self.operator} {self.right}"


@dataclass(slots=True, eq=False)
class IntNode(Node):
    value: int
    TYPE = "NodeInt"

    def __str__(self) -> str:
        return f"{self.TYPE}: {self.value}"


@dataclass(slots=True, eq=False)
class FloatNode(Node):
    value: float
    TYPE = "NodeFloat"

    def __str__(self) -> str:
        return f"{self.TYPE}: {self.value:f}"


@dataclass(slots=True, eq=False)
class BoolNode(Node):
    value: bool
    TYPE = "NodeBool"

    def __str__(self) -> str:
        return f"{self.TYPE}: {_go_bool(self.value)}"


@dataclass(slots=True, eq=False)
class WildcardNode(Node):
    """``.*``: every value of a map, element of a list or byte of a string."""

    TYPE = "NodeWildcard"


@dataclass(slots=True, eq=False)
class RecursiveNode(Node):
    """``..``: the value and every descendant that has children of its own."""

    TYPE = "NodeRecursive"


@dataclass(slots=True, eq=False)
class UnionNode(Node):
    """``[a,b]``: each alternative evaluated on the same input, results concatenated."""

    nodes: list[ListNode]
    TYPE = "NodeUnion"


def walk(node: Node) -> list[Node]:
    """The node and its descendants in kube's order (``collectNode`` in its parser tests)."""
    out: list[Node] = [node]
    if isinstance(node, ListNode):
        for child in node.nodes:
            out.extend(walk(child))
    elif isinstance(node, FilterNode):
        out.extend(walk(node.left))
        out.extend(walk(node.right))
    elif isinstance(node, UnionNode):
        for child in node.nodes:
            out.extend(walk(child))
    return out
