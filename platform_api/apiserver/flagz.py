"""``/flagz``: every command-line flag of the server and its value.

As kube-apiserver v1.36 serves it (the ComponentFlagz gate, beta, on by default): each
flag's value in the form pflag's ``String()`` gives it (``[a,b]`` for a list, ``1m30s``
for a duration, ``8`` for ``010``), for the flags given and the ones left at their
defaults alike, hidden and deprecated flags included.  Text for people, whose delimiter
is drawn once per process (kube caches the page), or the structured ``Flagz`` of
``config.platform.io`` (``v1alpha1``, deprecated, or ``v1beta1``) in JSON or YAML; content
negotiation as ``/statusz``.

kube's flags and their defaults come from a reference kube-apiserver (flagzdata.py);
where this server's default differs (its brand, ``--allow-privileged``, the files under
``--data-dir``), its own is shown, as the value it runs with.
"""

from __future__ import annotations

import ipaddress
import os
import random
from collections.abc import Callable, Mapping

from platform_api import goduration, gotext
from platform_api.apiserver.config import ServerConfig
from platform_api.apiserver.endpointoptions import advertised_address
from platform_api.apiserver.flagvalues import go_bool
from platform_api.apiserver.flagzdata import KUBE_FLAGS
from platform_api.apiserver.serverflags import FLAGS
from platform_api.apiserver.statusz import (
    DELIMITERS,
    GROUP,
    HEADER,
    TEXT,
    deprecation_warning,
    negotiate,
    structured,
)

# This server's flags that kube-apiserver does not have, by pflag type (the signing and
# token-cleaner flags are kube-controller-manager's, as its controllers run here).
OWN_TYPES = {
    "authentication-token-cache-ttl": "duration",
    "cluster-signing-duration": "duration",
    "controllers": "strings",
    "legacy-service-account-token-clean-up-period": "duration",
    "serve-upstream-groups": "bool",
    "workers": "int",
}
# Flags whose default here is not kube's.
_OWN_DEFAULTS = frozenset(
    {"allow-privileged", "service-account-issuer", "storage-backend", "storage-media-type"}
)
# kube's own sizes, which it puts beside the ones given: Events are not cached.
_WATCH_CACHE_SIZES = {"events": "0", "events.events.k8s.io": "0"}
_INTS = frozenset({"int", "int32", "int64", "uint", "Level"})
_LISTS = frozenset({"strings", "stringArray", "int32Slice"})


def values(given: Mapping[str, str], defaults: Mapping[str, str]) -> dict[str, str]:
    """Every flag's shown value: ``given`` (as on the command line; list flags' values
    joined by commas) in its type's form, else this server's ``defaults`` (the same
    raw form), else kube's default."""
    shown: dict[str, str] = {}
    for name in sorted({*KUBE_FLAGS, *defaults}):
        kind, kube_default = KUBE_FLAGS.get(name, (OWN_TYPES.get(name, "string"), ""))
        raw = given.get(name, defaults.get(name))
        shown[name] = kube_default if raw is None else pflag_string(kind, raw)
    sizes = given.get("watch-cache-sizes")
    if sizes:
        pairs = (item.rsplit("#", 1) for item in sizes.split(",") if "#" in item)
        merged = {**_WATCH_CACHE_SIZES, **dict(pairs)}
        listed = ",".join(f"{resource}#{size}" for resource, size in sorted(merged.items()))
        shown["watch-cache-sizes"] = f"[{listed}]"
    return shown


def pflag_string(kind: str, raw: str) -> str:
    """``raw``, parsed as a flag of pflag type ``kind``, as its ``String()`` prints it
    (the value as given where it would not parse: the server refused it before)."""
    try:
        return _typed(kind, raw)
    except ValueError:
        return raw


def _typed(kind: str, raw: str) -> str:
    if kind == "bool":
        parsed = go_bool(raw)
        return raw if parsed is None else str(parsed).lower()
    if kind in _INTS:
        return str(gotext.parse_int(raw.strip(), unsigned=kind == "uint", base=0))
    if kind.startswith("float"):
        return gotext.format_float(float(raw))
    if kind == "duration":
        return goduration.format_duration(goduration.parse_duration(raw))
    if kind == "ip":
        return str(ipaddress.ip_address(raw))
    if kind in _LISTS or kind == "namedCertKey":
        items = raw.split("\x00") if kind == "namedCertKey" else raw.split(",")
        return "[" + ",".join(_csv(item) for item in items if raw) + "]"
    if kind == "mapStringString":  # cliflag's map: pairs sorted
        return ",".join(sorted(pair.strip() for pair in raw.split(",") if pair.strip()))
    if kind == "stringToString":  # one pair as given, else pairs split at commas
        pairs = [raw.strip('"')] if raw.count("=") == 1 else raw.split(",")
        return "[" + ",".join(_csv(pair) for pair in pairs) + "]"
    if kind == "colonSeparatedMultimapStringString":  # feature gates: component:gate=value
        return ",".join(
            item if ":" in item.split("=", 1)[0] else f":{item}" for item in raw.split(",") if item
        )
    return raw


def _csv(field: str) -> str:
    """A field as Go's encoding/csv writes it."""
    if field == "" or not (any(c in field for c in ',"\r\n') or field[0].isspace()):
        return field
    return '"' + field.replace('"', '""') + '"'


class FlagzPage:
    """The page of one process: its flags, worked out on the first request (not at
    start: finding the advertised address may ask the resolver), and the text's
    delimiter, drawn then."""

    def __init__(self, flags: Callable[[], Mapping[str, str]]) -> None:
        self._source = flags
        self._flags: dict[str, str] | None = None
        self._text: bytes | None = None

    @property
    def flags(self) -> dict[str, str]:
        if self._flags is None:
            self._flags = dict(self._source())
        return self._flags

    def render(self, accept: str) -> tuple[bytes, bytes, bytes | None]:
        """The body, its content type and a Warning header (or None); kube's 406 for an
        Accept it cannot meet."""
        media, version = negotiate(accept, "Flagz")
        if media == TEXT:
            return self.text(), b"text/plain; charset=utf-8", None
        doc = {
            "kind": "Flagz",
            "apiVersion": f"{GROUP}/{version}",
            "metadata": {"name": "apiserver"},
            "flags": self.flags,
        }
        body, content_type = structured(doc, media, version, "Flagz")
        return body, content_type, deprecation_warning("flagz", version)

    def text(self) -> bytes:
        if self._text is None:
            d = random.choice(DELIMITERS)
            lines = "".join(f"{name}{d}{value}\n" for name, value in self.flags.items())
            self._text = (HEADER.format(component="apiserver", page="flagz") + lines).encode()
        return self._text


def shown_flags(cfg: ServerConfig) -> dict[str, str]:
    """Every flag of this server's command line as /flagz shows it."""
    return values(cfg.flags_given, server_defaults(cfg))


def server_defaults(cfg: ServerConfig) -> dict[str, str]:
    """This server's values of the flags not given, where they are not kube's: its own
    flags' defaults, the defaults it chose otherwise (``_OWN_DEFAULTS``), the files it
    keeps under --data-dir, and what kube fills in itself (the address advertised and the
    external host, the self-made serving certificate's files)."""
    defaults = {
        name: default
        for name, default, _ in FLAGS
        if name not in KUBE_FLAGS or name in _OWN_DEFAULTS
    }
    defaults["cert-dir"] = cfg.cert_dir
    key_file = cfg.service_account_signing_key_file or os.path.join(cfg.cert_dir, "sa.key")
    defaults["service-account-signing-key-file"] = key_file
    if cfg.embedded_pki:
        defaults["tls-cert-file"] = os.path.join(cfg.cert_dir, "apiserver.crt")
        defaults["tls-private-key-file"] = os.path.join(cfg.cert_dir, "apiserver.key")
    advertised = advertised_address(cfg.endpoints, cfg.bind_address)
    if advertised is not None:
        defaults["advertise-address"] = advertised
        defaults["external-hostname"] = advertised
    return defaults
