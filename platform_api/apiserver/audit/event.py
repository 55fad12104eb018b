"""The ``audit.platform.io/v1`` Event document: its fields in kube's order and spelling.

Go's encoder drops empty ``omitempty`` fields (user groups, objectRef of non-resource
requests, annotations) and writes keys in struct order, which log readers diff against;
``render`` reproduces both.  ``legacy_line`` is kube's one-line ``--audit-log-format=legacy``.
"""

from __future__ import annotations

import functools
import gzip
import ipaddress
from datetime import UTC, datetime
from typing import Any

import orjson
import yaml

from platform_api.codec import parse_yaml
from platform_api.codec.bounds import check_json_depth

GROUP = "audit.platform.io"
API_VERSION = f"{GROUP}/v1"
MAX_USER_AGENT = 1024  # kube truncates longer User-Agent headers
_ALWAYS = frozenset({"requestURI", "verb", "user"})  # not omitempty in kube's Event
_STATUS_KEYS = ("status", "message", "reason", "details", "code")
_ORDER = (
    "level", "auditID", "stage", "requestURI", "verb", "user", "impersonatedUser",
    "sourceIPs", "userAgent", "objectRef", "responseStatus", "requestObject",
    "responseObject", "requestReceivedTimestamp", "stageTimestamp", "annotations",
)  # fmt: skip


_second: list[Any] = [None, ""]  # the last whole second formatted: strftime is slow


def micro_time(seconds: float) -> str:
    """metav1.MicroTime: RFC 3339 in UTC with microseconds."""
    whole, micros = divmod(round(seconds * 1e6), 1_000_000)
    if _second[0] != whole:
        _second[0] = whole
        _second[1] = datetime.fromtimestamp(whole, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{_second[1]}.{micros:06d}Z"


def source_ips(forwarded_for: str, real_ip: str, remote: str) -> list[str]:
    """utilnet.SourceIPs: X-Forwarded-For's valid IPs, X-Real-Ip, then the peer."""
    ips: list[str] = []
    for item in forwarded_for.split(",") if forwarded_for else ():
        ip = _ip(item.strip())
        if ip:
            ips.append(ip)
    real = _ip(real_ip.strip()) if real_ip else ""
    if real and real not in ips:
        ips.append(real)
    peer = _ip(remote)
    if peer and (not ips or ips[-1] != peer):
        ips.append(peer)
    return ips


def client_ips(request: Any) -> list[str]:
    """A twisted.web request's source IPs (``source_ips``), its client's first."""
    peer = request.getClientAddress()
    return source_ips(
        (request.getHeader(b"x-forwarded-for") or b"").decode("latin-1"),
        (request.getHeader(b"x-real-ip") or b"").decode("latin-1"),
        getattr(peer, "host", "") or "",
    )


@functools.lru_cache(maxsize=1024)
def _ip(text: str) -> str:
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        return ""


def user_agent(header: str) -> str:
    if len(header) > MAX_USER_AGENT:
        return header[:MAX_USER_AGENT] + "...TRUNCATED"
    return header


def decode_body(body: bytes, content_type: str, encoding: str = "") -> Any:
    """A request or response body as JSON data, or None (binary encodings are not logged)."""
    if not body:
        return None
    if encoding == "gzip":
        body = gzip.decompress(body)
    media = content_type.split(";", 1)[0].strip().lower()
    try:
        if media.endswith("json") or not media:
            check_json_depth(body)  # no deeper than the server's encoders go
            return orjson.loads(body)
        if media.endswith("yaml"):  # bounded: a body of nested aliases is not expanded
            return parse_yaml(body)[0]
    except (ValueError, yaml.YAMLError):
        return None
    return None


def response_status(code: int, body: Any) -> dict[str, Any]:
    """``responseStatus``: the code, and a failure Status's bounded fields."""
    out: dict[str, Any] = {"metadata": {}}
    if isinstance(body, dict) and body.get("kind") == "Status":
        out.update((k, body[k]) for k in _STATUS_KEYS if body.get(k) not in (None, "", {}))
    out["code"] = code
    return out


def without_managed_fields(obj: Any) -> Any:
    """A copy of an object, list or Table with ``metadata.managedFields`` dropped."""
    if not isinstance(obj, dict):
        return obj
    out = dict(obj)
    meta = out.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        out["metadata"] = {k: v for k, v in meta.items() if k != "managedFields"}
    if isinstance(out.get("items"), list):
        out["items"] = [without_managed_fields(item) for item in out["items"]]
    if isinstance(out.get("rows"), list):
        out["rows"] = [
            {**row, "object": without_managed_fields(row.get("object"))}
            if isinstance(row, dict)
            else row
            for row in out["rows"]
        ]
    return out


def render(fields: dict[str, Any], api_version: str = API_VERSION) -> dict[str, Any]:
    """The Event as written: kind and apiVersion first, then kube's field order."""
    out: dict[str, Any] = {"kind": "Event", "apiVersion": api_version}
    for key in _ORDER:
        value = fields.get(key)
        if value or key in _ALWAYS:
            out[key] = value if value is not None else ""
    return out


def legacy_line(ev: dict[str, Any]) -> str:
    """audit.EventString: the ``--audit-log-format=legacy`` line (without newline)."""
    user = ev.get("user") or {}
    username, groups = "<none>", "<none>"
    if user.get("username"):
        username = user["username"]
        if user.get("groups"):
            groups = ",".join(_go_quote(g) for g in user["groups"])
    imp = ev.get("impersonatedUser")
    as_user, as_groups = "<self>", "<lookup>"
    if imp is not None:
        as_user = imp.get("username", "")
        if imp.get("groups") is not None:
            as_groups = ",".join(_go_quote(g) for g in imp["groups"])
    namespace = (ev.get("objectRef") or {}).get("namespace") or "<none>"
    status = ev.get("responseStatus")
    response = str(status["code"]) if status else "<deferred>"
    ips = ev.get("sourceIPs") or []
    fields = [
        ("id", ev.get("auditID", "")),
        ("stage", ev.get("stage", "")),
        ("ip", ips[0] if ips else "<unknown>"),
        ("method", ev.get("verb", "")),
        ("user", username),
        ("groups", groups),
        ("as", as_user),
        ("asgroups", as_groups),
        ("user-agent", ev.get("userAgent", "")),
        ("namespace", namespace),
        ("uri", ev.get("requestURI", "")),
    ]
    text = " ".join(f"{k}={_go_quote(v)}" for k, v in fields)
    return f'{_rfc3339_nano(ev.get("requestReceivedTimestamp", ""))} AUDIT: {text} response="{response}"'


def _go_quote(value: str) -> str:
    return orjson.dumps(value).decode()


def _rfc3339_nano(micro: str) -> str:
    """Go's RFC3339Nano drops trailing zeros of the fraction."""
    if "." not in micro:
        return micro
    head, _, frac = micro.rstrip("Z").partition(".")
    frac = frac.rstrip("0")
    return f"{head}.{frac}Z" if frac else f"{head}Z"
