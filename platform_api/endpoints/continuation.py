"""Continue tokens of chunked lists: opaque, versioned, unpadded base64url JSON.

A token holds the list's revision and the last key it returned (relative to the
resource prefix, so a token can never range outside the collection it came from).
Revision -1 marks an "inconsistent" continuation, issued after the snapshot expired.
"""

from __future__ import annotations

import base64
import binascii

import orjson

from platform_api import errors

TOKEN_VERSION = "meta.platform.io/v1"
INCONSISTENT = -1


def encode(revision: int, start_key: bytes) -> str:
    payload = orjson.dumps(
        {"v": TOKEN_VERSION, "rv": revision, "start": start_key.decode("utf-8") + "\x00"}
    )
    return base64.urlsafe_b64encode(payload).rstrip(b"=").decode()


def _invalid(detail: str) -> errors.StatusError:
    return errors.bad_request(f"invalid continue token: continue key is not valid: {detail}")


def decode(token: str) -> tuple[int, bytes]:
    """``(revision, last key)`` of a token; 400 when it is not one of ours."""
    try:
        data = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (binascii.Error, ValueError) as e:
        raise _invalid(str(e)) from None
    try:
        parsed = orjson.loads(data)
    except orjson.JSONDecodeError as e:
        raise _invalid(str(e)) from None
    if not isinstance(parsed, dict):
        raise _invalid("json: cannot unmarshal into continueToken")
    if parsed.get("v") != TOKEN_VERSION:
        raise _invalid(f"server does not recognize this encoded version {parsed.get('v')!r}")
    revision = parsed.get("rv")
    start = parsed.get("start")
    if isinstance(revision, bool):  # an int to Python, never to Go's decoder
        raise _invalid(
            "json: cannot unmarshal bool into Go struct field continueToken.rv of type int64"
        )
    if not isinstance(revision, int) or revision == 0:
        raise _invalid(f"incorrect encoded start resourceVersion (version {TOKEN_VERSION})")
    if not isinstance(start, str) or not start.endswith("\x00") or len(start) < 2:
        raise _invalid(f"encoded start key empty (version {TOKEN_VERSION})")
    return revision, start[:-1].encode("utf-8")


EXPIRED_MESSAGE = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this "
    "response to retrieve the remainder of the results. Continuing with the provided token "
    "results in an inconsistent list - objects that were created, modified, or deleted between "
    "the time the first chunk was returned and now may show up in the list."
)


def expired(start_key: bytes) -> errors.StatusError:
    """410 Expired carrying a fresh, inconsistent continuation of the same list."""
    error = errors.expired(EXPIRED_MESSAGE)
    error.metadata = {"continue": encode(INCONSISTENT, start_key)}
    return error
