"""A connect request's options object: what admission sees as the object of a CONNECT.

kube's ``ConnectResource`` reads the query (and, for the proxies, the rest of the path)
into the subresource's options type with its parameter codec, then runs admission with
that object before it looks the target up.  Here the same object is built in its v1 JSON
form: ``PodExecOptions``, ``PodAttachOptions``, ``PodPortForwardOptions``,
``PodProxyOptions``, ``ServiceProxyOptions``, ``NodeProxyOptions``, their fields in
Go's order and left out where Go's ``omitempty`` leaves them out (an exec's ``command``
is always there, ``null`` when none is given).
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.apiserver.requestinfo import RequestInfo, query_flag
from platform_api.gotext import parse_int

Obj = dict[str, Any]
_STREAMS = ("stdin", "stdout", "stderr", "tty")


def options(kind: str, info: RequestInfo, args: dict[bytes, list[bytes]]) -> Obj:
    """The v1 options object of a connect request; 400 as kube's conversion refuses a
    port that is not a 16-bit unsigned number."""
    obj: Obj = {"kind": kind, "apiVersion": "v1"}
    if kind in ("PodExecOptions", "PodAttachOptions"):
        for name in _STREAMS:
            given = args.get(name.encode())
            if given and query_flag(given[0]):
                obj[name] = True
        container = _first(args, "container")
        if container:
            obj["container"] = container
        if kind == "PodExecOptions":
            commands = args.get(b"command")
            obj["command"] = [c.decode("utf-8", "replace") for c in commands] if commands else None
    elif kind == "PodPortForwardOptions":
        ports = _ports(args.get(b"ports") or [])
        if ports:
            obj["ports"] = ports
    else:  # the proxies: the path after the subresource, as kube's requestInfo has it
        path = _subpath(info)
        if path:
            obj["path"] = path
    return obj


def _first(args: dict[bytes, list[bytes]], name: str) -> str:
    values = args.get(name.encode())
    return values[0].decode("utf-8", "replace") if values else ""


def _ports(values: list[bytes]) -> list[int]:
    """kube's ``[]int32`` from query values: each split on commas, each a ParseUint of
    16 bits."""
    ports = []
    for value in values:
        for text in value.decode("utf-8", "replace").split(","):
            try:
                ports.append(parse_int(text, unsigned=True, bits=16))
            except ValueError as e:
                raise errors.bad_request(f"cannot convert to []int32: {e}") from None
    return ports


def _subpath(info: RequestInfo) -> str:
    """kube's proxy subpath: the parts after the subresource, led by a slash, with the
    request's trailing slash kept."""
    path = "/".join(info.parts[3:])
    if path and not path.startswith("/"):
        path = "/" + path
    if info.path.endswith("/") and not path.endswith("/"):
        path += "/"
    return path
