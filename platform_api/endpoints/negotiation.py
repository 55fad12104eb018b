"""Media-type negotiation: ``Accept`` picks the output, ``Content-Type`` the input decoder.

Two layers, as in kube.  go-restful first matches a built-in route's Accept against the
types the route produces, by bare type (``*/*`` matches, ``application/*`` does not,
q-values and parameters are ignored): none is its own 406.  Then kube's ``negotiation``
package: the Accept list is ordered by q-value then position (q=0 entries included);
``*/*`` and ``application/*`` mean JSON; a listed type the server cannot produce is
skipped (so ``protobuf, json`` falls back to JSON); nothing producible is 406.  A
request body without a Content-Type is JSON.
"""

from __future__ import annotations

import functools
import math
import struct
from dataclasses import dataclass, field

from platform_api import errors

JSON = "application/json"
YAML = "application/yaml"
# Protobuf under the brand, and under the name stock clients send (answered in kind).
PROTOBUF = "application/vnd.platform.protobuf"
UPSTREAM_PROTOBUF = "application/vnd.kubernetes.protobuf"
PROTOBUF_TYPES = (PROTOBUF, UPSTREAM_PROTOBUF)
JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH_YAML = "application/apply-patch+yaml"
# Behind the CBORServingAndStorage gate (alpha, off): bodies, answers, watch streams.
CBOR = "application/cbor"
CBOR_SEQ = "application/cbor-seq"
APPLY_PATCH_CBOR = "application/apply-patch+cbor"

SERIALIZED = (JSON, YAML)
ACCEPTED_OUTPUT = [JSON, YAML, PROTOBUF]
# Groups whose Table and discovery documents we answer: ours, and the upstream name
# stock clients send (they cannot be told about the rebrand).
META_GROUPS = ("meta.platform.io", "meta.k8s.io")
DISCOVERY_GROUPS = ("apidiscovery.platform.io",)
PARTIAL_KINDS = ("PartialObjectMetadata", "PartialObjectMetadataList")


@dataclass(frozen=True)
class MediaType:
    type: str  # "type/subtype"
    params: dict[str, str] = field(default_factory=dict)
    quality: float = 1.0

    @property
    def as_(self) -> str:
        return self.params.get("as", "")


def parse_media_type(text: str) -> MediaType:
    """A Content-Type, as Go's mime.ParseMediaType reads one (names folded to lower case)."""
    pieces = [p.strip() for p in text.split(";")]
    params: dict[str, str] = {}
    quality = 1.0
    for piece in pieces[1:]:
        key, _, value = piece.partition("=")
        key = key.strip().lower()
        value = value.strip().strip('"')
        if key == "q":
            try:
                quality = float(value)
            except ValueError:
                quality = 0.0
        elif key:
            params[key] = value
    return MediaType(pieces[0].lower(), params, quality)


def parse_accept(header: str) -> tuple[MediaType, ...]:
    """The clauses by preference, as kube's goautoneg orders them.  Clients send the same
    few headers on every request: parsing one cost ~2% of a create's CPU, so short ones
    are parsed once (a header is the client's to choose: a long one is not kept)."""
    if len(header) <= _KEPT_ACCEPT:
        return _parse_kept(header)
    return _parse_accept(header)


_KEPT_ACCEPT = 512


def _parse_accept(header: str) -> tuple[MediaType, ...]:
    """goautoneg's ParseAccept: clauses split at commas, trimmed of spaces only, case
    kept; a type without a subtype is dropped unless it is ``*``, as is ``a/b/c``; a
    parameter without exactly one ``=`` is dropped, ``q`` read as a float32 (0 when it
    is no number).  Then sorted as its sort.Sort sorts them (insertion sort, up to 12):
    its comparison puts a named type before a wildcard whatever their q-values."""
    clauses: list[MediaType] = []
    for raw in header.split(","):
        head, _, rest = raw.strip(" ").partition(";")
        main, _, sub = head.partition("/")
        main = main.strip(" ")
        if not sub:
            if main != "*":
                continue
            sub = "*"
        elif "/" in sub and sub.split("/", 1)[1]:
            continue
        else:
            sub = sub.split("/", 1)[0].strip(" ")
        quality, params = 1.0, {}
        for piece in rest.split(";") if rest else ():
            name, _, after = piece.partition("=")
            value, _, extra = after.partition("=")
            if not after or extra:
                continue
            name = name.strip(" ")
            if name == "q":
                quality = _float32(value)
            else:
                params[name] = value.strip(" ")
        clauses.append(MediaType(f"{main}/{sub}", params, quality))
    _go_insertion_sort(clauses)
    return tuple(clauses)


def _float32(text: str) -> float:
    """strconv.ParseFloat(text, 32) as goautoneg keeps it: 0 for what is no number, the
    value rounded to float32 (an infinity past its range)."""
    if text != text.strip() or "_" in text:
        return 0.0
    try:
        value = float(text)
    except ValueError:
        return 0.0
    try:
        packed: float = struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)
    return packed


def _go_less(a: MediaType, b: MediaType) -> bool:
    if a.quality > b.quality:
        return True
    a_main, _, a_sub = a.type.partition("/")
    b_main, _, b_sub = b.type.partition("/")
    if a_main != "*" and b_main == "*":
        return True
    return a_sub != "*" and b_sub == "*"


def _go_insertion_sort(items: list[MediaType]) -> None:
    for i in range(1, len(items)):
        j = i
        while j > 0 and _go_less(items[j], items[j - 1]):
            items[j], items[j - 1] = items[j - 1], items[j]
            j -= 1


_parse_kept = functools.lru_cache(maxsize=256)(_parse_accept)


# What go-restful routes produce: objects; collections, which also stream watches; a
# pod's log; the version document.
OBJECT_PRODUCES = [JSON, YAML, PROTOBUF]
WATCH_STREAMS = [f"{JSON};stream=watch", f"{PROTOBUF};stream=watch"]
LIST_PRODUCES = [*OBJECT_PRODUCES, *WATCH_STREAMS]
LOG_PRODUCES = ["text/plain", *OBJECT_PRODUCES]
VERSION_PRODUCES = [JSON]


def check_produces(accept: str, produces: list[str]) -> None:
    """go-restful's route selection: 406 unless an Accept entry's bare type is ``*/*`` or
    one the route produces (Protobuf by either name); an absent Accept is ``*/*``."""
    if not accept:
        return
    names = set(produces)
    if PROTOBUF in names:
        names.add(UPSTREAM_PROTOBUF)
    for part in accept.split(","):
        bare = part.split(";", 1)[0].strip()
        if bare == "*/*" or bare in names:
            return
    raise errors.not_producible(produces)


@dataclass(frozen=True)
class Output:
    """What to render: an ``encoding`` (json, yaml, protobuf, cbor) of a ``view``: the objects
    themselves (""), a ``table``, their ``partial`` metadata, or aggregated ``discovery``.
    ``group``/``version`` are those the view was asked in; ``media`` the Protobuf type
    the client named."""

    encoding: str
    view: str = ""
    group: str = ""
    version: str = ""
    pretty: bool = False
    media: str = ""
    refused: str = ""  # metadata of the other shape asked for (kube's 406 once answered)

    @property
    def content_type(self) -> bytes:
        if self.view == "discovery":
            return f"{JSON};g={self.group};v=v2;as=APIGroupDiscoveryList".encode()
        if self.encoding == "protobuf":
            return (self.media or PROTOBUF).encode()
        if self.encoding == "cbor":
            return CBOR.encode()
        return YAML.encode() if self.encoding == "yaml" else JSON.encode()

    @property
    def plain_json(self) -> bool:
        """Objects as JSON exactly as stored: the bytes can go out untouched."""
        return self.encoding == "json" and not self.view and not self.pretty


def output_types(cbor: bool) -> list[str]:
    """The media types a 406 lists."""
    return [*ACCEPTED_OUTPUT, CBOR] if cbor else ACCEPTED_OUTPUT


def stream_types(cbor: bool) -> list[str]:
    """What a watch's 406 lists: the types with a stream framing (YAML has none)."""
    return [*WATCH_STREAMS, f"{CBOR};stream=watch"] if cbor else WATCH_STREAMS


# kube's serializers in the order its negotiated serializer lists them (the first that
# a wildcard matches is JSON): media type, encoding, whether it frames a watch stream.
# Protobuf answers under either name; CBOR is listed only when served.
_SERIALIZERS = (
    (JSON, "json", True),
    (YAML, "yaml", False),
    (PROTOBUF, "protobuf", True),
    (UPSTREAM_PROTOBUF, "protobuf", True),
)
_CBOR = (CBOR, "cbor", True)


@dataclass(frozen=True)
class _Endpoint:
    """What an endpoint allows (kube's EndpointRestrictions): its views, and whether it
    may answer in Protobuf untransformed (a custom resource may not).  ``errors``: the
    default restrictions kube writes a Status with (no view, no server version)."""

    table: bool = False
    partial: str = ""
    protobuf: bool = True
    discovery: bool = False
    discovery_groups: tuple[str, ...] = DISCOVERY_GROUPS
    errors: bool = False


def _negotiate(accept: str, endpoint: _Endpoint, cbor: bool) -> Output | None:
    """kube's NegotiateMediaTypeOptions: each clause in goautoneg's order against each
    serializer in order (same type and subtype, the type with ``*``, or ``*/*``), the
    first whose parameters the endpoint allows; None when none does."""
    if not accept:  # an absent (not a blank) header is the first serializer's
        return Output("json")
    serializers = (*_SERIALIZERS, _CBOR) if cbor else _SERIALIZERS
    for clause in parse_accept(accept):
        main, _, sub = clause.type.partition("/")
        for media, encoding, streams in serializers:
            s_main, _, s_sub = media.partition("/")
            if (main == s_main and sub in (s_sub, "*")) or main == sub == "*":
                out = _accepts(clause, media, encoding, streams, endpoint)
                if out is not None:
                    return out
    return None


def _accepts(
    clause: MediaType, media: str, encoding: str, streams: bool, endpoint: _Endpoint
) -> Output | None:
    """kube's acceptMediaTypeOptions and the endpoint's AllowsMediaTypeTransform."""
    params = clause.params
    stream = params.get("stream", "")
    if stream and (not streams or stream != "watch"):
        return None
    server_version = params.get("sv", "")
    if server_version and (endpoint.errors or server_version != "v1"):
        return None
    pretty = params.get("pretty") == "1"
    named = media if encoding == "protobuf" else ""
    if not ("as" in params or "g" in params or "v" in params):
        if encoding == "protobuf" and not endpoint.protobuf:
            return None  # a custom resource's standard serializers have no Protobuf
        return Output(encoding, pretty=pretty, media=named)
    if endpoint.errors:
        return None
    kind, group, version = clause.as_, params.get("g", ""), params.get("v", "")
    if kind == "APIGroupDiscoveryList":
        if endpoint.discovery and group in endpoint.discovery_groups:
            return Output("json", "discovery", group, version or "v2")
        return None
    if group not in META_GROUPS or version not in ("v1", "v1beta1"):
        return None
    if kind == "Table":
        if not endpoint.table or encoding not in ("json", "yaml"):
            return None
        return Output(encoding, "table", group, version, pretty=pretty)
    if kind in PARTIAL_KINDS and endpoint.partial:
        other_shape = kind.endswith("List") != (endpoint.partial == "list")
        refused = kind if other_shape else ""
        return Output(encoding, "partial", group, version, pretty, named, refused)
    return None


def partial_refusal(out: Output, go_type: str) -> str:
    """kube's 406 for metadata of the other shape (a list's for one object), which it
    answers once it holds the answer, naming the Go type it holds; "" when none."""
    if not out.refused:
        return ""
    shape = "not a list" if out.refused.endswith("List") else "a list"
    return f"you requested {out.refused}, but the requested object is {shape} ({go_type})"


def negotiate_output(
    accept: str,
    *,
    table: bool = False,
    discovery: bool = False,
    discovery_groups: tuple[str, ...] = DISCOVERY_GROUPS,
    protobuf: bool = False,
    partial: str = "",
    cbor: bool = False,
) -> Output:
    """The answer's encoding and view from Accept, or 406.

    ``protobuf``: the type may be answered in Protobuf as it is (built-in kinds);
    ``partial``: "object" or "list" when the request may be answered as
    PartialObjectMetadata (get, list, watch); ``cbor``: the server speaks CBOR (its gate
    is on).
    """
    endpoint = _Endpoint(table, partial, protobuf, discovery, discovery_groups)
    out = (_negotiate_kept if len(accept) <= _KEPT_ACCEPT else _negotiate)(accept, endpoint, cbor)
    if out is None:
        raise errors.not_acceptable(output_types(cbor))
    return out


def error_encoding(accept: str, cbor: bool = False) -> tuple[str, str]:
    """(encoding, media) of a Status error, negotiated as kube writes one (its default
    endpoint restrictions: no view, no server version); ``raw`` when nothing matches
    (kube's WriteRawJSON, indented, whatever the client asked)."""
    out = (_negotiate_kept if len(accept) <= _KEPT_ACCEPT else _negotiate)(accept, _ERRORS, cbor)
    return ("raw", "") if out is None else (out.encoding, out.media)


_ERRORS = _Endpoint(errors=True)
# The answers are immutable and clients repeat their headers: short ones are kept.
_negotiate_kept = functools.lru_cache(maxsize=512)(_negotiate)


def input_type(content_type: str, accepted: list[str]) -> str:
    """The body's media type if this endpoint decodes it, else 415.  Protobuf under its
    upstream name counts as ``PROTOBUF`` (the name 415 messages list)."""
    media = parse_media_type(content_type) if content_type.strip() else MediaType(JSON)
    kind = PROTOBUF if media.type == UPSTREAM_PROTOBUF else media.type
    if kind in accepted:
        return kind
    raise errors.unsupported_media_type(content_type, accepted)


def accepted_patch_type(content_type: str, accepted: list[str], custom: bool = False) -> str:
    """The PATCH body's type if this resource takes it, else 415: go-restful's plain one
    for a built-in kind's route, kube's patch handler's list for a custom resource."""
    media = parse_media_type(content_type) if content_type.strip() else MediaType("")
    if media.type in accepted:
        return media.type
    if custom:
        raise errors.unsupported_media_type(content_type, accepted)
    raise errors.unsupported_patch_type()
