"""The paths of the subresources that connect (a pod's ``exec``, ``attach``,
``portforward`` and ``log``; the pod, service and node proxies), as kube publishes them.

kube lists them whether or not anything answers behind them; here they answer as kube's
do up to the step where a kubelet or a pod would be dialed.  Each connect operation
takes the options kind's parameters and answers a string of any media type; a proxy
answers every method (kube's ProxyREST), the others GET and POST; ``log`` is a read of
the pod.
"""

from __future__ import annotations

from typing import Any

from platform_api.apiserver.openapiparams import NAMESPACE, PRETTY, param
from platform_api.apiserver.openapipaths import (
    CONNECTING,
    DOCUMENTED,
    UNAUTHORIZED,
    gv_name,
    path_item,
    tag,
    valid_id,
)
from platform_api.scheme.types import ResourceType, Subresource, api_path

_STRING = {"type": "string"}
_METHODS = {
    "exec": ("get", "post"),
    "attach": ("get", "post"),
    "portforward": ("get", "post"),
    "proxy": ("delete", "get", "head", "options", "patch", "post", "put"),
}
_STREAMS = [
    param("stderr", "Redirect the standard error stream of the pod for this call.", "boolean"),
    param("stdin", "Redirect the standard input stream of the pod for this call.", "boolean"),
    param("stdout", "Redirect the standard output stream of the pod for this call.", "boolean"),
    param("tty", "Allocate a TTY for the call.", "boolean"),
]
_CONTAINER = param("container", "The container to connect to (the only one by default).")
# each subresource's options, as query parameters
_OPTIONS: dict[str, list[dict[str, Any]]] = {
    "exec": [
        param("command", "The command to run (argv, one parameter each), not in a shell."),
        _CONTAINER,
        *_STREAMS,
    ],
    "attach": [_CONTAINER, *_STREAMS],
    "portforward": [param("ports", "The ports to forward (required with WebSockets).", "integer")],
    "log": [
        param("container", "The container whose log to read (the only one by default)."),
        param("follow", "Follow the log stream.", "boolean"),
        param(
            "insecureSkipTLSVerifyBackend", "Skip verifying the kubelet's certificate.", "boolean"
        ),
        param("limitBytes", "The most bytes of log to read.", "integer"),
        param("previous", "The log of the container's previous instance.", "boolean"),
        param("sinceSeconds", "Only the log written in these last seconds.", "integer"),
        param("stream", "Which stream's log: All, Stdout or Stderr."),
        param("tailLines", "Only this many lines from the end of the log.", "integer"),
        param("timestamps", "Put a timestamp before each line.", "boolean"),
    ],
}
_PATH = param("path", "path to the resource", where="path")


def paths(rt: ResourceType) -> dict[str, Any]:
    """The paths of ``rt``'s connecting subresources (none for most kinds)."""
    found: dict[str, Any] = {}
    within = f"/namespaces/{{namespace}}/{rt.plural}" if rt.namespaced else f"/{rt.plural}"
    base = f"{api_path(rt.group, rt.version)}{within}/{{name}}"
    for sub in rt.subresources:
        if sub.name not in CONNECTING:
            continue
        name = param("name", f"name of the {sub.kind}", where="path")
        named = [name, NAMESPACE] if rt.namespaced else [name]
        if sub.name == "log":
            found[f"{base}/log"] = path_item(
                {"get": _log(rt, sub, [*_OPTIONS["log"], *named, PRETTY])}
            )
            continue
        options = _OPTIONS.get(sub.name) or [_proxy_path(rt)]
        found[f"{base}/{sub.name}"] = _connect(rt, sub, [*options, *named], "")
        if sub.name == "proxy":
            every = [*options, *named, _PATH]
            found[f"{base}/proxy/{{path}}"] = _connect(rt, sub, every, "WithPath")
    return found


def _proxy_path(rt: ResourceType) -> dict[str, Any]:
    return param("path", f"The URL path of the request to proxy to the {rt.kind.lower()}.")


def _connect(rt: ResourceType, sub: Subresource, params: list[dict[str, Any]], suffix: str) -> Any:
    scope = "Namespaced" if rt.namespaced else ""
    ops = {}
    for method in _METHODS[sub.name]:
        op_id = f"connect{gv_name(rt.group, rt.version)}{valid_id(method, True)}{scope}{rt.kind}"
        op_id += valid_id(sub.name, True) + suffix
        description = f"connect {method.upper()} requests to {sub.name} of {rt.kind}"
        content = {"*/*": {"schema": _STRING}}
        ops[method] = _operation(rt, sub, op_id, description, "connect", content, params)
    return path_item(ops)


def _log(rt: ResourceType, sub: Subresource, params: list[dict[str, Any]]) -> Any:
    op_id = (
        f"read{gv_name(rt.group, rt.version)}{'Namespaced' if rt.namespaced else ''}{rt.kind}Log"
    )
    content = {media: {"schema": _STRING} for media in ["text/plain", *DOCUMENTED]}
    description = f"read log of the specified {rt.kind}"
    return _operation(rt, sub, op_id, description, "get", content, params)


def _operation(
    rt: ResourceType,
    sub: Subresource,
    op_id: str,
    description: str,
    action: str,
    content: dict[str, Any],
    params: list[dict[str, Any]],
) -> dict[str, Any]:
    return {
        "tags": [tag(rt.group, rt.version)],
        "description": description,
        "operationId": op_id,
        "parameters": list(params),
        "responses": {"200": {"description": "OK", "content": content}, "401": UNAUTHORIZED},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {
            "group": rt.group,
            "kind": sub.kind,
            "version": rt.version,
        },
    }
