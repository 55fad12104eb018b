"""Turn a request body into the object a write stores, with kube's decoding errors.

Order as in kube's create/update handlers: negotiate the input type (415), parse
(400 ``the object provided is unrecognized``), check apiVersion and kind, decode
against the schema (400 ``... cannot be handled as a ...``), then apply the field
validation level to unknown and duplicate fields (Strict: 400, Warn: warnings).
"""

from __future__ import annotations

from typing import Any

from platform_api import errors, heavy
from platform_api.apiextensions.resource import CustomResourceStrategy
from platform_api.codec import (
    BodyError,
    Duplicates,
    cbor,
    duplicate_key_lines,
    parse_json,
    parse_yaml,
    protobuf,
)
from platform_api.codec.bounds import as_interface_values, deeper_than, whole_floats_to_ints
from platform_api.context import Context
from platform_api.endpoints.negotiation import CBOR, JSON, PROTOBUF, YAML, Output, input_type
from platform_api.endpoints.options import WriteOptions, write_options
from platform_api.endpoints.scope import Scope
from platform_api.endpoints.typemeta import (
    cannot_handle,
    kind_missing,
    read_group_version,
    type_mismatch,
    typemeta_problem,
    unrecognized,
)
from platform_api.registry.prepare import check_namespace
from platform_api.scheme.aliases import Aliases
from platform_api.scheme.decoding import Decoded, Decoder
from platform_api.scheme.gonames import DecodeError
from platform_api.scheme.readback import typemeta_field_problem
from platform_api.scheme.schemas import Schemas
from platform_api.scheme.types import ResourceType

Obj = dict[str, Any]


def input_types(custom: bool, serves_cbor: bool) -> list[str]:
    """What a create or update body may be: Protobuf for built-in kinds, CBOR when on."""
    types = [JSON, YAML] if custom else [JSON, YAML, PROTOBUF]
    return [*types, CBOR] if serves_cbor else types


def parse(
    data: bytes, media: str, expected_kind: str, api_version: str = "", unstructured: bool = False
) -> tuple[Any, Duplicates]:
    """A body in its media type, as JSON values (and, for JSON and YAML, the keys it
    held twice).  Protobuf bodies take the URL's type where their envelope has none.
    ``unstructured`` bodies (custom resources) decode numbers as Go's interface{} does."""
    if media == CBOR:
        try:
            return cbor.decode(data), {}
        except cbor.CBORError as e:
            if e.late:
                raise cannot_handle(expected_kind, api_version, str(e)) from None
            problem = f"unable to determine group/version/kind: {e}"
            raise unrecognized(expected_kind, problem, data) from None
    if media == PROTOBUF:
        try:
            decoded = protobuf.decode(data, api_version, expected_kind)
        except protobuf.ProtobufError as e:
            if e.typed is None:
                raise unrecognized(expected_kind, str(e), data) from None
            body_version, body_kind = e.typed
            raise cannot_handle(body_kind, body_version, str(e), expected_kind) from None
        if deeper_than(decoded):  # the stages after decoding recurse (codec.bounds)
            raise unrecognized(expected_kind, protobuf.NESTED, data)
        return decoded, {}
    try:
        if media != YAML:  # an empty YAML document is an empty object to go-yaml
            if not data.strip():
                raise BodyError("unexpected end of JSON input")
            return parse_json(data, unstructured)
        raw, duplicates = parse_yaml(data)
        if unstructured and isinstance(raw, dict | list):
            as_interface_values(data, raw)
            # sigs.k8s.io/yaml writes go-yaml's 3.0 as JSON's 3, which kube reads as int64
            whole_floats_to_ints(raw)
        return raw, duplicates
    except BodyError as e:
        if e.bare and e.number:  # a number past float64, found once the body parsed
            raise cannot_handle(expected_kind, api_version, str(e)) from None
        problem = str(e) if e.bare else f"couldn't get version/kind; json parse error: {e}"
        raise unrecognized(expected_kind, problem, data) from None


def strict_or_warn(ctx: Context, level: str, problems: list[str], prefix: str = "") -> None:
    """Apply a fieldValidation level to ``unknown field``/``duplicate field`` problems;
    ``prefix`` leads a Strict refusal's message (a create or update names the kind)."""
    if not problems or level == "Ignore":
        return
    if level == "Strict":
        raise errors.bad_request(prefix + "strict decoding error: " + ", ".join(problems))
    for problem in problems:
        ctx.warn(problem)


def yaml_duplicate_problems(data: bytes, level: str) -> list[str]:
    """A YAML body's repeated keys, any map's, as kube's strict decoding reports them:
    yaml.v2's own complaint, its lines one warning each or one refusal together."""
    lines = duplicate_key_lines(data)
    if level == "Strict":
        return ["yaml: unmarshal errors:\n  " + "\n  ".join(lines)]
    return lines


def decode_against(
    raw: Obj,
    duplicates: Duplicates,
    schemas: Schemas,
    definition: str,
    custom: CustomResourceStrategy | None = None,
    from_cbor: bool = False,
    applied: bool = False,
    as_config: bool = False,
) -> Decoded:
    """A parsed body as its type shapes it: typed decoding for built-in kinds, the CRD's
    structural schema (metadata coerced, unknown fields pruned, defaults) for custom ones.
    kube's custom-resource decoder reports unknown fields of JSON bodies only.
    ``as_config``: an applied configuration as kube's field manager reads it, which no
    decoder has seen: no defaults, quantities as written."""
    if custom is not None:
        decoded = custom.decode(raw, duplicates, keep_nulls=applied, defaults=not as_config)
        if from_cbor:
            decoded.unknown, decoded.duplicates = [], []
        return decoded
    decoder = Decoder(schemas, duplicates, cbor=from_cbor, keep_nulls=applied, as_written=as_config)
    return decoder.decode(raw, definition)


def custom_strategy(rt: ResourceType, strategy: object) -> CustomResourceStrategy | None:
    """The custom-resource strategy of a custom type's main resource, else None."""
    if rt.custom and isinstance(strategy, CustomResourceStrategy):
        return strategy
    return None


def decode_object(
    data: bytes,
    content_type: str,
    rt: ResourceType,
    schemas: Schemas,
    ctx: Context,
    level: str,
    kind: str = "",
    definition: str = "",
    api_version: str = "",
    custom: CustomResourceStrategy | None = None,
    aliases: Aliases | None = None,
    serves_cbor: bool = False,
    also: tuple[str, ...] = (),
) -> Obj:
    """The decoded, pruned object of a create or update body.

    ``kind``/``definition``/``api_version`` default to the resource's; sub-resources
    with their own kind (``scale``) pass theirs, and ``also`` the other versions of it
    the endpoint takes as its own (kube's AcceptsGroupVersion: an Eviction's v1beta1).
    """
    kind = kind or rt.kind
    definition = definition or rt.definition
    api_version = api_version or rt.api_version
    media = input_type(content_type, input_types(custom is not None, serves_cbor))
    raw, duplicates = parse(data, media, kind, api_version, custom is not None)
    if raw is None and media in (JSON, YAML):
        if custom is not None:
            raise kind_missing(data, media, None, kind, api_version, level)
        raw = {}  # Go reads null into a struct as nothing at all: an empty object
    if not isinstance(raw, dict):
        raise unrecognized(kind, typemeta_problem(media, raw), data)
    problem = typemeta_field_problem(raw) if media != CBOR else ""
    if problem:
        raise unrecognized(kind, problem, data)
    sent_version = raw.get("apiVersion") or ""
    if sent_version.count("/") > 1 and media != CBOR:  # kube's ParseGroupVersion
        raise unrecognized(kind, f"unexpected GroupVersion string: {sent_version}", data)
    if custom is not None and not raw.get("kind"):  # the unstructured decoder needs one
        raise kind_missing(data, media, raw, kind, api_version, level)
    if custom is not None and "apiVersion" in raw and raw["apiVersion"] is None:
        problem = ".apiVersion accessor error: <nil> is of the type <nil>, expected string"
        raise cannot_handle(raw["kind"], "", problem, kind)
    if "/" in sent_version:
        read_group_version(raw, sent_version, kind, data, custom is not None)
    # a built-in kind's decoder takes the endpoint's type for what the body leaves out
    body_version = raw.get("apiVersion") or ("" if custom is not None else api_version)
    body_kind = raw.get("kind") or kind
    if not isinstance(body_version, str) or not isinstance(body_kind, str):
        raise errors.bad_request(f"the object provided is unrecognized (must be of type {kind})")
    if aliases is not None:
        body_version, alias = aliases.canonical_api_version(body_version)
        if alias:  # an upstream group name: the answer goes out in it
            ctx.render_group = ctx.render_group or alias
    # another version the endpoint takes (same schema), decoded and named as sent
    decoded_as = body_version if body_kind == kind and body_version in also else api_version
    # a custom resource of another kind is decoded, and refused by its validation (422)
    other_kind = custom is not None and body_version == api_version
    if (body_version, body_kind) != (decoded_as, kind) and not other_kind:
        raise type_mismatch(
            raw, body_version, body_kind, api_version, kind, definition, schemas, custom
        )
    version = decoded_as.rsplit("/", 1)[-1]
    try:
        decoded = decode_against(raw, duplicates, schemas, definition, custom, media == CBOR)
        if custom is None:  # free-form fields hold Go's interface{} numbers
            as_interface_values(data, decoded.obj)
    except (DecodeError, BodyError) as e:
        if custom is not None:  # named as sent: kube's decoder returns the body's type
            raise cannot_handle(body_kind, body_version, str(e), kind) from None
        raise cannot_handle(kind, decoded_as, str(e)) from None
    prefix = f'{kind} in version "{version}" cannot be handled as a {kind}: '
    problems = decoded.strict_errors()
    if other_kind and body_kind != kind:  # kube prunes no other kind: its metadata alone
        problems = [p for p in problems if p.startswith('unknown field "metadata.')]
    if media == YAML and duplicates and level != "Ignore":
        problems = yaml_duplicate_problems(data, level) + [
            p for p in problems if not p.startswith("duplicate field ")
        ]
    strict_or_warn(ctx, level, problems, prefix)
    obj = decoded.obj
    obj["apiVersion"] = api_version
    obj["kind"] = body_kind
    if aliases is not None:
        aliases.canonical_managed_fields(obj)
    if not isinstance(obj.get("metadata"), dict):
        obj["metadata"] = {}
    return obj


async def decode_write(
    scope: Scope,
    options_kind: str,
    kind: str = "",
    definition: str = "",
    api_version: str = "",
    also: tuple[str, ...] = (),
    undecodable: str = "",
    transforms: bool = False,
) -> tuple[WriteOptions, Output, Obj]:
    """The shared start of a write: options, output type, decoded body; on a thread when
    the body is large (``heavy``).  ``transforms``: the answer may be metadata alone
    or a Table (the resource's own creates and updates).

    ``kind``/``definition``/``api_version`` name the body's own type on sub-resources
    that take one (Scale, Binding, TokenRequest); the resource's otherwise.  A body that
    does not decode is answered ``undecodable`` when given (kube's handler could not
    name the type it failed to decode).
    """
    return await heavy.run(
        _decode_write,
        scope,
        options_kind,
        kind,
        definition,
        api_version,
        also,
        undecodable,
        transforms,
    )


def _decode_write(
    scope: Scope,
    options_kind: str,
    kind: str,
    definition: str,
    api_version: str,
    also: tuple[str, ...],
    undecodable: str,
    transforms: bool,
) -> tuple[WriteOptions, Output, Obj]:
    out = scope.write_output() if transforms else scope.output()
    custom = None if kind else custom_strategy(scope.resource, scope.store.strategy)
    if options_kind == "CreateOptions":  # kube's create refuses the body's type unread;
        input_type(scope.content_type(), input_types(custom is not None, scope.handlers.cbor))
    body = scope.body()  # its update reads the body and options first
    scope.event("limitedReadBody succeeded", len=len(body))
    opts = write_options(scope.request, options_kind)
    scope.ctx.dry_run = opts.dry_run
    scope.ctx.field_manager = opts.field_manager
    scope.event("About to convert to expected version")
    audit = scope.ctx.audit_request
    try:
        obj = decode_object(
            body,
            scope.content_type(),
            scope.resource,
            scope.handlers.scheme.schemas,
            scope.ctx,
            opts.field_validation,
            kind=kind,
            definition=definition,
            api_version=api_version,
            custom=custom,
            aliases=scope.handlers.aliases,
            serves_cbor=scope.handlers.cbor,
            also=also,
        )
    except errors.StatusError as e:
        if audit is not None:
            audit.undecodable()
        if undecodable and e.code == 400:
            raise errors.bad_request(undecodable) from None
        raise
    if audit is not None:
        audit.decoded(scope.outgoing(obj))  # in the group the client named
    scope.event("Conversion done")
    return opts, out, obj


async def decode_subresource(
    scope: Scope,
    options_kind: str,
    kind: str,
    definition: str,
    api_version: str,
    also: tuple[str, ...] = (),
    undecodable: str = "",
) -> Obj:
    """The body of a sub-resource write whose kind is its own; a namespace it names must
    be the URL's (kube's handlers check it before anything else)."""
    decoded = await decode_write(
        scope, options_kind, kind, definition, api_version, also, undecodable
    )
    obj = decoded[2]
    meta = obj.get("metadata")
    check_namespace(scope.resource, meta if isinstance(meta, dict) else {}, scope.namespace)
    return obj
