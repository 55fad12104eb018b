"""Media-type negotiation: ``Accept`` picks the output, ``Content-Type`` the input decoder.

Rules as kube's ``negotiation`` package: the Accept list is ordered by q-value then
position; ``*/*`` and ``application/*`` mean JSON; a listed type the server cannot
produce is skipped (so ``protobuf, json`` falls back to JSON); nothing producible is
406.  A request body without a Content-Type is JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from platform_api import errors

JSON = "application/json"
YAML = "application/yaml"
PROTOBUF = "application/vnd.platform.protobuf"
JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH_YAML = "application/apply-patch+yaml"

SERIALIZED = (JSON, YAML)
ACCEPTED_OUTPUT = [JSON, YAML]
ACCEPTED_INPUT = [JSON, YAML]
# Groups whose Table and discovery documents we answer: ours, and the upstream name
# stock clients send (they cannot be told about the rebrand).
META_GROUPS = ("meta.platform.io", "meta.k8s.io")
DISCOVERY_GROUPS = ("apidiscovery.platform.io",)


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


def parse_accept(header: str) -> list[MediaType]:
    if not header.strip():
        return [MediaType(JSON)]
    types = [parse_media_type(part) for part in header.split(",") if part.strip()]
    ranked = sorted(enumerate(types), key=lambda it: (-it[1].quality, it[0]))
    return [t for _, t in ranked if t.quality > 0]


@dataclass(frozen=True)
class Output:
    """What to render: ``json``/``yaml`` objects, a ``table``, or aggregated ``discovery``."""

    format: str
    group: str = ""
    version: str = ""
    pretty: bool = False

    @property
    def content_type(self) -> bytes:
        if self.format == "yaml":
            return YAML.encode()
        if self.format == "table":
            return f"{JSON};as=Table;v={self.version};g={self.group}".encode()
        if self.format == "discovery":
            return f"{JSON};g={self.group};v=v2;as=APIGroupDiscoveryList".encode()
        return JSON.encode()


def _plain(media: MediaType) -> Output | None:
    if media.type in ("*/*", "application/*", JSON, "application/json;stream=watch"):
        return Output("json")
    if media.type == YAML:
        return Output("yaml")
    return None


def negotiate_output(
    accept: str,
    *,
    table: bool = False,
    discovery: bool = False,
    discovery_groups: tuple[str, ...] = DISCOVERY_GROUPS,
) -> Output:
    """The first Accept entry this endpoint can produce, or 406."""
    for media in parse_accept(accept):
        kind = media.as_
        if kind == "Table":
            if (
                table
                and media.params.get("g") in META_GROUPS
                and media.params.get("v")
                in (
                    "v1",
                    "v1beta1",
                )
            ):
                return Output("table", media.params["g"], media.params["v"])
            continue
        if kind == "APIGroupDiscoveryList":
            if discovery and media.params.get("g") in discovery_groups:
                return Output("discovery", media.params["g"], media.params.get("v", "v2"))
            continue
        if kind or (media.type == "application/json" and media.params.get("g")):
            continue  # another rendering we do not offer
        plain = _plain(media)
        if plain is not None:
            return plain
    raise errors.not_acceptable(ACCEPTED_OUTPUT)


def input_type(content_type: str, accepted: list[str]) -> str:
    """The body's media type if this endpoint decodes it, else 415."""
    media = parse_media_type(content_type) if content_type.strip() else MediaType(JSON)
    if media.type in accepted:
        return media.type
    raise errors.unsupported_media_type(content_type, accepted)
