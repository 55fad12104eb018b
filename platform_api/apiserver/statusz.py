"""``/statusz``: kube's z-page of when the server started, how long it has been up, its
versions and its debugging paths.

As kube-apiserver v1.36 serves it (the ComponentStatusz gate, beta, on by default):
plain text for people, whose delimiter is drawn at random on every request so that no
script comes to parse it; or, when the Accept header names it, the structured
``Statusz`` of ``config.platform.io`` (``v1alpha1`` or ``v1beta1``) in JSON or YAML.
Any other Accept is a 406.
"""

from __future__ import annotations

import random
import time
from typing import Any

import orjson

from platform_api import errors
from platform_api.codec import yaml_dumps
from platform_api.endpoints.negotiation import JSON, YAML, parse_accept
from platform_api.timestamps import format_timestamp

GROUP = "config.platform.io"
VERSIONS = ("v1alpha1", "v1beta1")
TEXT = "text/plain"
ACCEPTED = [JSON, YAML, TEXT]
DELIMITERS = (":", ": ", "=", " ")
# The first segments of listed paths that are the API, not debugging pages.
_NOT_DEBUGGING = frozenset({"/apis", "/api", "/openid", "/openapi", "/.well-known"})
HEADER = (
    "\n{component} {page}\nWarning: This endpoint is not meant to be machine parseable, "
    "has no formatting compatibility guarantees and is for debugging purposes only.\n"
)


def negotiate(accept: str, kind: str) -> tuple[str, str]:
    """(media type, version of ``kind``; "" for text), or kube's 406."""
    if not accept.strip():
        return TEXT, ""
    for media in parse_accept(accept):  # by preference; kube takes even a q=0 entry
        if media.type in (TEXT, "text/*", "*/*"):
            return TEXT, ""
        params = media.params
        version = params.get("v", "")
        names_it = params.get("g") == GROUP and version in VERSIONS and media.as_ == kind
        if media.type in (JSON, YAML) and names_it:
            return media.type, version
    raise errors.not_acceptable(ACCEPTED)


def debugging_paths(listed: list[str]) -> list[str]:
    """The first segment of each listed path that is no API path, once each, sorted."""
    return sorted({"/" + p.split("/")[1] for p in listed} - _NOT_DEBUGGING)


def render(
    accept: str, started: float, versions: dict[str, str], paths: list[str]
) -> tuple[bytes, bytes, bytes | None]:
    """The page, its content type and a Warning header (kube's for the deprecated
    v1alpha1 document) or None.  ``versions``: the /version document."""
    media, version = negotiate(accept, "Statusz")
    up = int(time.time() - started)
    binary = versions["gitVersion"].removeprefix("v")
    emulation = f"{versions['emulationMajor']}.{versions['emulationMinor']}"
    if media == TEXT:
        d = random.choice(DELIMITERS)
        started_at = time.strftime("%a %b %e %H:%M:%S %Z %Y", time.localtime(started))
        text = HEADER.format(component="apiserver", page="statusz") + (
            f"\nStarted{d} {started_at}\nUp{d} {up // 3600} hr {up // 60 % 60:02d} min "
            f"{up % 60:02d} sec\nGo version{d} {versions['goVersion']}\n"
            f"Binary version{d} {binary}\nEmulation version{d} {emulation}\n"
            f"Paths{d} {' '.join(paths)}\n"
        )
        return text.encode(), b"text/plain; charset=utf-8", None
    doc: dict[str, Any] = {
        "kind": "Statusz",
        "apiVersion": f"{GROUP}/{version}",
        "metadata": {"name": "apiserver"},
        "startTime": format_timestamp(started),
        "uptimeSeconds": up,
        "goVersion": versions["goVersion"],
        "binaryVersion": binary,
        "emulationVersion": emulation,
        "paths": paths,
    }
    return (*structured(doc, media, version, "Statusz"), deprecation_warning("statusz", version))


def deprecation_warning(endpoint: str, version: str) -> bytes | None:
    """kube's Warning header for the deprecated version of a z-page's document."""
    if version != "v1alpha1":
        return None
    return (
        f'299 - "This version of the {endpoint} endpoint is deprecated. '
        'Please use a newer version."'
    ).encode()


def structured(doc: dict[str, Any], media: str, version: str, kind: str) -> tuple[bytes, bytes]:
    """A z-page's structured document in JSON (indented, as kube writes it) or YAML."""
    content_type = f"{media};g={GROUP};v={version};as={kind}".encode()
    if media == YAML:
        return yaml_dumps(doc), content_type
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2), content_type
