"""The generated field table, read into what the wire walks need.

``protobuf_fields`` is data only (written by ``scripts/gen_protobuf_fields.py``); this
module resolves its package-relative references, names the messages whose JSON form
kube writes by hand (times, quantities, raw JSON...), and finds the message of a kind.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from platform_api.codec.protobuf_fields import GO_NAMES, GO_TYPES, KINDS, LIST_WRAPPERS, MESSAGES
from platform_api.scheme.types import upstream_group

# Field flags, as the generator writes them.
REPEATED, POINTER, OMITEMPTY, OMITZERO, INLINE = 1, 2, 4, 8, 16

SCALARS = frozenset({"string", "bytes", "bool", "int32", "int64", "double"})

_META = "k8s.io.apimachinery.pkg.apis.meta.v1."
TIME = _META + "Time"
MICRO_TIME = _META + "MicroTime"
DURATION = _META + "Duration"
FIELDS_V1 = _META + "FieldsV1"
RAW_EXTENSION = "k8s.io.apimachinery.pkg.runtime.RawExtension"
INT_OR_STRING = "k8s.io.apimachinery.pkg.util.intstr.IntOrString"
QUANTITY = "k8s.io.apimachinery.pkg.api.resource.Quantity"
WATCH_EVENT = _META + "WatchEvent"

# Messages whose Go type marshals its own JSON: message name -> how.
SPECIAL: dict[str, str] = {
    TIME: "time",
    MICRO_TIME: "microtime",
    DURATION: "duration",
    FIELDS_V1: "rawjson",
    RAW_EXTENSION: "rawjson",
    INT_OR_STRING: "intorstring",
    QUANTITY: "quantity",
    **dict.fromkeys(LIST_WRAPPERS, "list"),
}
for _version in ("v1", "v1beta1"):
    _ext = f"k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.{_version}."
    SPECIAL[_ext + "JSON"] = "rawjson"
    SPECIAL[_ext + "JSONSchemaPropsOrBool"] = "orbool"
    SPECIAL[_ext + "JSONSchemaPropsOrArray"] = "orarray"
    SPECIAL[_ext + "JSONSchemaPropsOrStringArray"] = "orstringarray"


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a message, references resolved to full message names."""

    json: str
    number: int
    kind: str  # a scalar name, "message" or "map"
    flags: int
    ref: str  # message full name, or the map's value type (scalar or message name)

    @property
    def repeated(self) -> bool:
        return bool(self.flags & REPEATED)

    @property
    def pointer(self) -> bool:
        return bool(self.flags & POINTER)

    @property
    def inline(self) -> bool:
        return bool(self.flags & INLINE)


class UnknownMessage(KeyError):
    """The table has no message of that name."""


def _resolve(ref: str, package: str) -> str:
    if not ref or ref in SCALARS or "." in ref:
        return ref
    return f"{package}.{ref}"


@cache
def fields(message: str) -> tuple[Field, ...]:
    """The fields of ``message`` in Go struct order (the order of kube's JSON)."""
    try:
        rows = MESSAGES[message]
    except KeyError:
        raise UnknownMessage(message) from None
    package = message.rpartition(".")[0]
    out = []
    for json_name, number, kind, flags, ref in rows:
        target = ref.partition(",")[2] if kind == "map" else ref  # maps: the value type
        out.append(Field(json_name, number, kind, flags, _resolve(target, package)))
    return tuple(out)


# The OpenAPI definitions' branded packages, and the upstream Protobuf packages they are.
_UPSTREAM_PACKAGES = {
    "io.platform.api.": "k8s.io.api.",
    "io.platform.apimachinery.": "k8s.io.apimachinery.",
    "io.platform.apiextensions-apiserver.": "k8s.io.apiextensions_apiserver.",
    "io.platform.kube-aggregator.": "k8s.io.kube_aggregator.",
}


def message_of_definition(definition: str) -> str | None:
    """The message of a built-in type's OpenAPI definition (``io.platform.api.core.v1.Pod``
    is ``k8s.io.api.core.v1.Pod``); None for others."""
    for branded, upstream in _UPSTREAM_PACKAGES.items():
        if definition.startswith(branded):
            message = upstream + definition[len(branded) :]
            return message if message in MESSAGES else None
    return None


@cache
def embedded_path(message: str, json_name: str) -> tuple[str, ...]:
    """The embedded structs a field is promoted through (``ProbeHandler`` for a Probe's
    ``httpGet``), outermost first: Go's decoder names them in an error's field path."""
    if any(f.json == json_name and not f.inline for f in fields(message)):
        return ()
    for f in fields(message):
        if f.inline:
            inner = embedded_path(f.ref, json_name)
            if inner or any(g.json == json_name for g in fields(f.ref)):
                return (f.ref.rsplit(".", 1)[-1], *inner)
    return ()


@cache
def field_owner(message: str, json_name: str) -> str:
    """The message that declares a field: ``message``, or the embedded struct the field
    is promoted from (a RuleWithOperations' ``scope`` is its Rule's)."""
    if any(f.json == json_name and not f.inline for f in fields(message)):
        return message
    for f in fields(message):
        if f.inline:
            owner = field_owner(f.ref, json_name)
            if any(g.json == json_name and not g.inline for g in fields(owner)):
                return owner
    return message


def go_type(message: str, json_name: str) -> str | None:
    """The Go type of a field of a named non-struct type (``v1.ServiceType``,
    ``[]v1.IPFamily``), as Go's JSON decoder names it; None for the others."""
    return GO_TYPES.get(message, {}).get(json_name)


def go_name(message: str, f: Field) -> str:
    """The Go name of a field (``DNSPolicy``, ``ObjectMeta``), as gogo-protobuf's errors
    name it."""
    return GO_NAMES.get(message, {}).get(str(f.number)) or f.json[:1].upper() + f.json[1:]


def special(message: str) -> str | None:
    return SPECIAL.get(message)


def message_for(api_version: str, kind: str) -> str | None:
    """The message of a kind, by the ``apiVersion`` this server writes (branded groups)."""
    group, _, version = api_version.rpartition("/")
    found = KINDS.get((upstream_group(group), version, kind)) or KINDS.get(("*", "*", kind))
    if found is None and version:
        # Unversioned kinds (Status, APIVersions...) decode under any group version.
        unversioned = KINDS.get(("", "v1", kind))
        if unversioned is not None and unversioned.startswith(_META):
            return unversioned
    return found


def supports(api_version: str, kind: str) -> bool:
    """Whether kube has a Protobuf message for this kind (custom resources: no)."""
    return message_for(api_version, kind) is not None
