"""What kube's decoders say of a body's type: the unrecognized body, the body of another
type or version, a missing kind, an apiVersion as ParseGroupVersion reads it.  The
wording of the errors ``body`` raises while it reads a write's type meta."""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.apiextensions.resource import CustomResourceStrategy
from platform_api.apiextensions.schema.gojson_meta import DecodeError as ObjectMetaError
from platform_api.apiextensions.schema.objectmeta import get_object_meta
from platform_api.endpoints.deprecation_data import DEPRECATED
from platform_api.endpoints.negotiation import CBOR, YAML
from platform_api.gotext import go_text, marshal
from platform_api.gotext import quote as go_quote
from platform_api.gotext import typemeta_problem as json_typemeta_problem
from platform_api.scheme.readback import conversion_problem
from platform_api.scheme.schemas import Schemas

Obj = dict[str, Any]


def summarize(data: bytes, limit: int = 30) -> str:
    """``summarizeData``: the start of the body, as text for JSON objects, hex otherwise."""
    if not data:
        return "<empty>"
    if data[:1] == b"{":  # Go cuts the bytes, then writes them as a JSON string
        return go_text(data[:limit]) + " ..." if len(data) > limit else go_text(data)
    shown = data[:limit].hex()
    return shown + " ..." if len(data) > limit else shown


def unrecognized(kind: str, problem: str, data: bytes) -> errors.StatusError:
    """kube's 400 for a body it cannot even read the type of."""
    return errors.bad_request(
        f"the object provided is unrecognized (must be of type {kind}): {problem} "
        f"({summarize(data)})"
    )


def cannot_handle(
    kind: str, api_version: str, problem: str, as_kind: str = ""
) -> errors.StatusError:
    """kube's 400 for a body whose type it read (``kind``, ``api_version``) but whose
    content does not decode as the resource's kind (``as_kind``, the same by default)."""
    version = api_version.rsplit("/", 1)[-1]
    return errors.bad_request(
        f"{kind} in version {go_quote(version)} cannot be handled as a {as_kind or kind}: {problem}"
    )


def typemeta_problem(media: str, raw: Any) -> str:
    """Why Go could not read a TypeMeta out of a body that is no object."""
    if media == CBOR:
        cbor_type = "array" if isinstance(raw, list) else _CBOR_TYPES.get(type(raw), "primitives")
        why = (
            " (cannot decode CBOR array to struct without toarray option)"
            if cbor_type == "array"
            else ""
        )
        return (
            f"unable to determine group/version/kind: cbor: cannot unmarshal {cbor_type} into "
            f"Go value of type v1.TypeMeta{why}"
        )
    return json_typemeta_problem(raw)


_CBOR_TYPES = {int: "positive integer", str: "byte string"}


def read_group_version(raw: Obj, sent: str, kind: str, data: bytes, custom: bool) -> None:
    """An apiVersion with an empty part as ParseGroupVersion reads it: ``/v1`` is
    ``v1``, ``/`` none at all, and ``g/`` a group without a version, which a built-in
    kind's decoder finds missing (a custom one's, not its version)."""
    group, _, version = sent.partition("/")
    if group and not version and not custom:
        text = data.decode("utf-8", "replace")
        problem = f"Object 'apiVersion' is missing in '{text}'"
        raise cannot_handle(raw.get("kind") or kind, "", problem)
    if group:
        return
    if version:
        raw["apiVersion"] = version
    else:
        del raw["apiVersion"]


def kind_missing(
    data: bytes, media: str, raw: Obj | None, kind: str, api_version: str, level: str
) -> errors.StatusError:
    """A custom resource's body without a kind.  Without strict decoding kube's decoder
    hands back the type it defaulted (the body's version, else the endpoint's), so the
    answer names it, and it quotes a YAML body as the JSON it made of it; the strict
    decoder hands back no type and quotes the body as sent."""
    if level != "Ignore":
        text = data.decode("utf-8", "replace")
        return unrecognized(kind, f"Object 'Kind' is missing in '{text}'", data)
    text = marshal(raw) if media == YAML else data.decode("utf-8", "replace")
    body_version = (raw or {}).get("apiVersion") or ""
    version = api_version if body_version in ("", "/") else body_version
    return cannot_handle(kind, version, f"Object 'Kind' is missing in '{text}'")


def type_mismatch(
    raw: Obj,
    body_version: str,
    body_kind: str,
    api_version: str,
    kind: str,
    definition: str,
    schemas: Schemas,
    custom: CustomResourceStrategy | None,
) -> errors.StatusError:
    """A body of another type than the resource's, refused in kube's words: a built-in
    resource's decoder converts into its internal type, and names what it cannot convert
    or does not know; the handler refuses another version of the same kind, and any
    mismatch of a custom resource."""
    group, _, version = body_version.rpartition("/")
    try:
        schemas.for_kind(group, version, body_kind)
        known = True
    except KeyError:
        known = False
    # Another version of the same kind (in its group or an older one: extensions/v1beta1
    # Deployment): kube converts a registered one, then refuses it.  Served versions are
    # known here; kube's scheme also registers older ones, each of which has a
    # deprecation (apps/v1beta2 DaemonSet; apps/v1beta1 has none).
    other_version = body_kind == kind and (known or (group, version, body_kind) in DEPRECATED)
    if custom is None and not other_version:
        head = f'{body_kind} in version "{version}" cannot be handled as a {kind}: '
        detail = conversion_problem(raw, body_version, body_kind, kind, definition, schemas)
        return errors.bad_request(head + detail)
    if custom is not None:  # its decoder coerced the metadata before the handler looked
        try:
            get_object_meta(raw, False)
        except ObjectMetaError as e:
            return cannot_handle(body_kind, body_version, str(e), kind)
    if body_version != api_version:
        return errors.bad_request(
            f"the API version in the data ({body_version}) does not match the expected API "
            f"version ({api_version})"
        )
    return errors.bad_request(
        f"the kind in the data ({body_kind}) does not match the expected kind ({kind})"
    )
