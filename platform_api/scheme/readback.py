"""An object read back into its Go type, as kube's JSON serializer reads a document.

A request body, a patched document and the object a mutating webhook or admission
policy patched all pass through kube's typed decoder: it takes the type from the
document's ``apiVersion`` and ``kind`` (either may be missing: the expected type's
fills in), refuses a type its scheme lacks, and decodes the fields into the Go struct,
where a value of the wrong JSON type is an error.  What a patch wrote that the type
cannot hold (a number in a ConfigMap's ``data``, a ``kind`` of another resource) is
refused here, so it is never stored.
"""

from __future__ import annotations

from typing import Any

from platform_api.codec import protobuf
from platform_api.gotext import json_kind, marshal
from platform_api.scheme.decoding import Decoder
from platform_api.scheme.gonames import DecodeError
from platform_api.scheme.schemas import Schemas
from platform_api.scheme.types import internal_package

Obj = dict[str, Any]


class ReadBackError(ValueError):
    """The document does not decode into the type (kube's decoder's words)."""


class OtherKind(ReadBackError):
    """The document decoded as another kind, which does not convert into the expected
    one's internal type (kube's converter's words)."""


def typemeta_field_problem(raw: Obj) -> str:
    """Why Go could not read the TypeMeta of an object whose apiVersion or kind is no
    string (null is as absent), or "": the first such field in the document."""
    bad = [k for k in ("apiVersion", "kind") if not isinstance(raw.get(k, ""), str | None)]
    if not bad:  # every write's path: two lookups, no walk over the body
        return ""
    name = bad[0] if len(bad) == 1 else next(k for k in raw if k in bad)
    return (
        "couldn't get version/kind; json parse error: json: cannot unmarshal "
        f"{json_kind(raw[name])} into Go struct field .{name} of type string"
    )


def conversion_problem(
    raw: Obj,
    body_version: str,
    body_kind: str,
    kind: str,
    definition: str,
    schemas: Schemas,
    scheme: str = protobuf.SCHEME,
) -> str:
    """What kube's decoder says of a built-in resource's body of another type: that it
    knows no such type (in ``scheme``), or why the body does not decode as that type, or
    the conversion it lacks into the resource's internal type."""
    group, _, version = body_version.rpartition("/")
    try:
        other = schemas.for_kind(group, version, body_kind)
    except KeyError:
        return str(protobuf.NotRegisteredError(body_version, body_kind, scheme))
    try:
        Decoder(schemas, {}).decode(raw, other)
    except DecodeError as e:
        return str(e)
    return unknown_conversion(version, body_kind, definition, kind)


def unknown_conversion(version: str, body_kind: str, definition: str, kind: str) -> str:
    internal = internal_package(definition)
    return f"converting ({version}.{body_kind}) to ({internal}.{kind}): unknown conversion"


def read_back(
    doc: Obj, expected: tuple[str, str, str], schemas: Schemas, strict: bool = False
) -> Obj:
    """``doc`` decoded into the built-in type ``expected`` (group, version, kind), with
    that type's apiVersion and kind; a custom resource's (a type the schemas lack) is
    returned as it is once it has a kind, for its own defaulting, pruning and validation.  ReadBackError in kube's
    words; ``strict`` (a mutating policy's JSON patch): unknown and duplicate fields
    are errors too."""
    group, version, kind = expected
    problem = typemeta_field_problem(doc)
    if problem:
        raise ReadBackError(problem)
    try:
        definition = schemas.for_kind(group, version, kind)
    except KeyError:  # unstructured: kube's decoder needs only a kind
        if not doc.get("kind"):
            raise ReadBackError(f"Object 'Kind' is missing in '{marshal(doc)}'") from None
        return doc
    api_version = f"{group}/{version}" if group else version
    sent_version, sent_kind = _typemeta(doc, group, api_version)
    sent_kind = sent_kind or kind
    if (sent_version, sent_kind) != (api_version, kind):
        _other_kind(doc, sent_version, sent_kind, kind, definition, schemas)
    try:
        decoded = Decoder(schemas, {}).decode(doc, definition)
    except DecodeError as e:
        raise ReadBackError(str(e)) from None
    if strict and decoded.strict_errors():
        raise ReadBackError("strict decoding error: " + ", ".join(decoded.strict_errors()))
    out = decoded.obj
    out["apiVersion"], out["kind"] = api_version, kind
    return out


def _typemeta(doc: Obj, group: str, api_version: str) -> tuple[str, str]:
    """The document's group/version and kind, kube's defaults filled in: no version takes
    the expected one's when the group is missing or the same."""
    sent = doc.get("apiVersion") or ""
    sent_group, _, sent_version = sent.rpartition("/")
    if not sent_version and sent_group in ("", group):
        sent = api_version
    return sent, doc.get("kind") or ""


def _other_kind(
    doc: Obj, sent_version: str, sent_kind: str, kind: str, definition: str, schemas: Schemas
) -> None:
    problem = conversion_problem(doc, sent_version, sent_kind, kind, definition, schemas)
    version = sent_version.rpartition("/")[2]
    if problem == unknown_conversion(version, sent_kind, definition, kind):
        raise OtherKind(problem)
    raise ReadBackError(problem)
