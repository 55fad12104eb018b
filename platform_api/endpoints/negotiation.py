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
    type: str
    params: dict[str, str] = field(default_factory=dict)
    quality: float = 1.0

    @property
    def as_(self) -> str:
        return self.params.get("as", "")


def parse_media_type(text: str) -> MediaType:
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
    """The entries by preference.  Clients send the same few headers on every request:
    parsing one cost ~2% of a create's CPU, so short ones are parsed once (a header is
    the client's to choose: a long one is not kept)."""
    if len(header) <= _KEPT_ACCEPT:
        return _parse_kept(header)
    return _parse_accept(header)


_KEPT_ACCEPT = 512


def _parse_accept(header: str) -> tuple[MediaType, ...]:
    if not header.strip():
        return (MediaType(JSON),)
    types = [parse_media_type(part) for part in header.split(",") if part.strip()]
    ranked = sorted(enumerate(types), key=lambda it: (-it[1].quality, it[0]))
    return tuple(t for _, t in ranked)


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


def _encoding(media: MediaType, protobuf: bool, cbor: bool) -> tuple[str, str] | None:
    """(encoding, media type) of an Accept entry this server can write, else None."""
    if media.type in ("*/*", "application/*", JSON):
        return "json", ""
    if media.type == YAML:
        return "yaml", ""
    if protobuf and media.type in PROTOBUF_TYPES:
        return "protobuf", media.type
    if cbor and media.type == CBOR:
        return "cbor", ""
    return None


def _view(media: MediaType, table: bool, partial: str) -> str | None:
    """The view an ``as=`` Accept entry asks for, if offered here, else None."""
    kind, group, version = media.as_, media.params.get("g"), media.params.get("v")
    if kind == "Table":
        ok = table and group in META_GROUPS and version in ("v1", "v1beta1")
        return "table" if ok else None
    if kind in PARTIAL_KINDS:
        ok = bool(partial) and group in META_GROUPS and version in ("v1", "v1beta1")
        return "partial" if ok else None
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
    """The first Accept entry this endpoint can produce, or 406.

    ``protobuf``: the type has a Protobuf message; ``partial``: "object" or "list" when
    the request may be answered as PartialObjectMetadata (get, list, watch); ``cbor``:
    the server speaks CBOR (its gate is on).
    """
    for media in parse_accept(accept):
        if media.as_ == "APIGroupDiscoveryList":
            if discovery and media.params.get("g") in discovery_groups:
                return Output("json", "discovery", media.params["g"], media.params.get("v", "v2"))
            continue
        encoding = _encoding(media, protobuf, cbor)
        if encoding is None:
            continue
        if media.as_:
            view = _view(media, table, partial)
            if view is None or (view == "table" and encoding[0] in ("protobuf", "cbor")):
                continue  # a rendering we do not offer (kube has no Protobuf or CBOR Table)
            group, version = media.params.get("g", ""), media.params.get("v", "")
            other_shape = view == "partial" and media.as_.endswith("List") != (partial == "list")
            refused = media.as_ if other_shape else ""
            return Output(encoding[0], view, group, version, media=encoding[1], refused=refused)
        if media.type == JSON and media.params.get("g"):
            continue
        return Output(encoding[0], media=encoding[1])
    raise errors.not_acceptable(output_types(cbor))


def error_encoding(accept: str, cbor: bool = False) -> tuple[str, str]:
    """(encoding, media) of a Status error: the first Accept entry that names JSON, YAML,
    Protobuf or (when served) CBOR, as a Status can always be written in each; else JSON
    (``raw``: kube's WriteRawJSON, indented, when the client accepts none of them).
    An entry asking for another rendering (``as=Table``) is no Status: skipped."""
    for media in parse_accept(accept):
        if media.as_:
            continue
        encoding = _encoding(media, protobuf=True, cbor=cbor)
        if encoding is not None:
            return encoding
    return ("json", "") if not accept.strip() else ("raw", "")


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
