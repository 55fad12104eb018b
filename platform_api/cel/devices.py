"""The environment of DRA device selectors (kube's ``k8s.io/dynamic-resource-allocation/cel``).

A selector sees one variable, ``device`` (``kubernetes.DRADevice``): its ``driver``, its
``allowMultipleAllocations`` (kube v1.36's DRAConsumableCapacity, on by default), and
two maps of maps, ``attributes`` (domain -> name -> value) and ``capacity`` (domain ->
name -> quantity), each bounded as kube bounds them for cost estimates; ``cel.bind`` is
available (cel-go's ext.Bindings).  A selector must yield a bool or kube's "unknown type"
(an attribute's value), and its worst-case cost must stay within kube's limit.

Protobuf cannot type a map of maps, so the inner maps are ``map(string, dyn)`` here:
what kube's type checker refuses of a capacity's ``kubernetes.Quantity`` (``>``, ``+``)
passes the check here and is never evaluated by this server.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from platform_api.cel.checked import type_text
from platform_api.cel.cost import estimate
from platform_api.cel.coster import Estimate, Node
from platform_api.cel.environment import Environment
from platform_api.cel.errors import CompileError
from platform_api.cel.schematypes import DeclType, build_pool

DEVICE = "device"
DEVICE_TYPE = "kubernetes.DRADevice"
# kube's resource API limits the estimates use (resource/v1 types.go).
MAX_DOMAIN, MAX_ID, MAX_DRIVER = 63, 32, 63
MAX_ENTRIES = 32  # ResourceSliceMaxAttributesAndCapacitiesPerDevice
MAX_ATTRIBUTE_LENGTH = 64  # DeviceAttributeMaxValueLength
_BINDINGS = (("bindings", None),)
# What a selector may yield: a bool, or an attribute's value (kube's AnyType; dyn here).
_RESULTS = ("bool", "dyn")


# Keys of the attribute and capacity maps: a domain, then an identifier (kube's key types).
_DOMAIN_KEY = DeclType("string", max_elements=MAX_DOMAIN)
_ID_KEY = DeclType("string", max_elements=MAX_ID)


def _two_level(value: DeclType) -> DeclType:
    inner = DeclType("map", max_elements=MAX_ENTRIES, min_size=2, elem=value)
    return DeclType("map", max_elements=MAX_ENTRIES, min_size=2, elem=inner)


def _device() -> DeclType:
    device = DeclType("object", min_size=2)
    device.fields = {
        "driver": ("driver", DeclType("string", max_elements=MAX_DRIVER)),
        "allowMultipleAllocations": ("allowMultipleAllocations", DeclType("bool", 1)),
        "attributes": ("attributes", _two_level(DeclType("dyn", MAX_ATTRIBUTE_LENGTH))),
        "capacity": ("capacity", _two_level(DeclType("dyn"))),
    }
    return device


class DeviceSizes:
    """kube's DRA sizeEstimator: the declared bounds along the path (map keys are
    domains, then identifiers), where any name selected from an attribute map
    (``device.attributes["d"].model``) has the bound of an attribute value."""

    def __init__(self, device: DeclType) -> None:
        self.device = device
        self.keys: dict[int, DeclType] = {}
        for name in ("attributes", "capacity"):
            outer = device.fields[name][1]
            assert outer.elem is not None
            self.keys[id(outer)], self.keys[id(outer.elem)] = _DOMAIN_KEY, _ID_KEY
        self.attribute = device.fields["attributes"][1].elem.elem  # type: ignore[union-attr]

    def size(self, node: Node) -> Estimate | None:
        if not node.path or node.path[0] != DEVICE:
            return None
        current: DeclType | None = self.device
        for step in node.path[1:]:
            if current is None:
                return None
            if step in ("@items", "@values"):
                current = current.elem
            elif step == "@keys":
                current = self.keys.get(id(current))
            elif step in current.fields:
                current = current.fields[step][1]
            else:
                current = current.elem if current.elem is self.attribute else None
        return Estimate(0, current.max_elements) if current is not None else None


@functools.lru_cache(maxsize=1)
def _compiler() -> tuple[Environment, DeviceSizes]:
    device = _device()
    pool = build_pool(device, DEVICE_TYPE)
    env = Environment({DEVICE: device.cel_type()}, pool=pool, extensions=_BINDINGS)
    return env, DeviceSizes(device)


@dataclass(frozen=True)
class Compiled:
    """A selector's compile error (kube's detail text) or its worst-case cost."""

    error: str = ""
    max_cost: int = 0


def compile_selector(expression: str) -> Compiled:
    """kube's CompileCELExpression, for validation: the error detail or the cost."""
    env, sizes = _compiler()
    try:
        checked, _ = env.check(expression)
    except CompileError as e:
        return Compiled(error=str(e))
    name = type_text(checked.type_of(checked.ast.expr.id))
    if name not in _RESULTS:
        return Compiled(error=f"must evaluate to bool or the unknown type, not {name}")
    return Compiled(max_cost=estimate(checked, sizes).hi)
