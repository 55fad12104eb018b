"""Continue tokens of chunked lists: opaque, versioned, unpadded base64url JSON.

A token holds the list's revision and where the next page starts: kube's start key,
relative to the list's own key prefix (``<name>\\x00`` in a namespace, or
``<namespace>/<name>\\x00`` across namespaces), which the list handler maps to and
from storage keys.  Revision -1 marks an "inconsistent" continuation, issued after
the snapshot expired.
"""

from __future__ import annotations

import base64
import string
from dataclasses import dataclass
from typing import Any

import orjson

from platform_api import errors
from platform_api.codec import BodyError, parse_json
from platform_api.gotext import json_kind, path_clean

TOKEN_VERSION = "meta.platform.io/v1"
INCONSISTENT = -1


def encode(revision: int, start: str) -> str:
    payload = orjson.dumps({"v": TOKEN_VERSION, "rv": revision, "start": start})
    return base64.urlsafe_b64encode(payload).rstrip(b"=").decode()


def _invalid(detail: str = "") -> errors.StatusError:
    message = "invalid continue token: continue key is not valid"
    return errors.bad_request(f"{message}: {detail}" if detail else message)


def decode(token: str) -> tuple[int, str]:
    """``(revision, start key)`` of a token; 400 when it is not one of ours, worded as
    kube's ``DecodeContinue`` words it.  As kube, a start key that ``path.Clean``
    would change is refused: it cannot climb out of the list it is joined to."""
    parsed = _token_fields(_raw_url_base64(token))
    version = parsed.get("v") or ""
    if version != TOKEN_VERSION:
        raise _invalid(f"server does not recognize this encoded version {version}")
    revision = parsed.get("rv")
    start = parsed.get("start") or ""
    if not revision:
        raise _invalid(f"incorrect encoded start resourceVersion (version {TOKEN_VERSION})")
    if not start:
        raise _invalid(f"encoded start key empty (version {TOKEN_VERSION})")
    rooted = start if start.startswith("/") else "/" + start
    if path_clean(rooted) != rooted:
        raise _invalid(start)
    return revision, rooted[1:]


_BASE64URL = frozenset(string.ascii_letters + string.digits + "-_")


def _raw_url_base64(token: str) -> bytes:
    """Go's ``base64.RawURLEncoding``: no padding, nothing outside the alphabet."""
    bad = next((i for i, char in enumerate(token) if char not in _BASE64URL), None)
    if bad is None and len(token) % 4 == 1:
        bad = len(token) - 1
    if bad is not None:
        raise _invalid(f"illegal base64 data at input byte {bad}")
    return base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))


_FIELD_TYPES = {"v": "string", "rv": "int64", "start": "string"}


def _token_fields(data: bytes) -> dict[str, Any]:
    """The token's JSON as Go decodes it into kube's continueToken struct."""
    try:
        parsed, _ = parse_json(data)
    except BodyError as e:
        raise _invalid(str(e)) from None
    if not isinstance(parsed, dict):
        kind = json_kind(parsed)
        raise _invalid(f"json: cannot unmarshal {kind} into Go value of type storage.continueToken")
    for name, value in parsed.items():
        go_type = _FIELD_TYPES.get(name)
        if go_type is None or value is None:
            continue
        fits = isinstance(value, str) if go_type == "string" else _is_int64(value)
        if not fits:
            kind = json_kind(value)
            if kind == "number" and go_type == "int64":  # a number that does not fit: its text
                kind = f"number {value}"
            raise _invalid(
                f"json: cannot unmarshal {kind} into Go struct field continueToken.{name} "
                f"of type {go_type}"
            )
    return parsed


def _is_int64(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63


EXPIRED_MESSAGE = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this "
    "response to retrieve the remainder of the results. Continuing with the provided token "
    "results in an inconsistent list - objects that were created, modified, or deleted between "
    "the time the first chunk was returned and now may show up in the list."
)


def expired(start: str) -> errors.StatusError:
    """410 Expired carrying a fresh, inconsistent continuation of the same list."""
    error = errors.expired(EXPIRED_MESSAGE)
    error.metadata = {"continue": encode(INCONSISTENT, start)}
    return error


@dataclass(frozen=True)
class TokenKeys:
    """How a list's start keys map to storage keys: ``kind`` is the kind's key prefix,
    ``listed`` the list's (a namespace's, or the kind's).  Below the prefix, storage
    keys are kube's, so a start key is the storage key relative to the list's."""

    kind: bytes
    listed: bytes

    def start_after(self, token_start: str) -> bytes:
        """The storage key a continued list starts after.  kube starts at the token's
        key, ``<last key>\\x00`` (the first key past the last one returned); storage
        starts after a key: the last key itself, or, for a start key made by hand, the
        greatest key below it (no stored key, UTF-8 throughout, has a 0xff byte)."""
        key = token_start.encode()
        if b"\x00" in key[:-1]:
            # Issued by an earlier release, whose keys parted a namespace from a name
            # with a NUL: ``<namespace>\x00<name>\x00``, relative to the kind's keys.
            key = key.replace(b"\x00", b"/", 1)
            if self.listed != self.kind:
                if not (self.kind + key).startswith(self.listed):
                    raise _invalid()
                return self.kind + key[:-1]
        if not key:  # "/": the whole list
            return b""
        if key.endswith(b"\x00"):
            return self.listed + key[:-1]
        return self.listed + key[:-1] + bytes([key[-1] - 1]) + b"\xff"

    def token_start(self, last_key: bytes) -> str:
        """The start key of the page after ``last_key``, as kube writes it."""
        return last_key[len(self.listed) :].decode() + "\x00"
