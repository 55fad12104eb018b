"""``pods/log``: kube's answers without a kubelet.

No pod here ever runs, so there is never a log to stream: a valid request for a pod
no node has taken is answered as kube answers it, 204 with no body (``kubectl logs``
prints nothing and succeeds).  A pod bound to a node gets kube's answer for its
node's kubelet: 404 for a node that is gone, 500 for one without an address, and the
500 of a kubelet that cannot be reached for the rest.  The options and the container
are checked first, as kube's log REST checks them: bad numbers 400,
``PodLogOptions`` rules 422, an unknown container or a missing name on a pod of
several containers 400.
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.apiextensions.schema.gojson_meta import parse_rfc3339
from platform_api.endpoints.connect import NO_KUBELETS, kubelet_address
from platform_api.endpoints.options import args
from platform_api.endpoints.responses import bare
from platform_api.endpoints.scope import Scope
from platform_api.gotext import parse_int as go_parse_int
from platform_api.validation import field
from platform_api.validation.field import FieldError

_INTEGERS = ("sinceSeconds", "tailLines", "limitBytes")
_NAMES = (*_INTEGERS, "sinceTime", "container", "stream")


def _options(scope: Scope) -> tuple[dict[str, str], dict[str, int]]:
    """The query's first values, its integers as Go parses them, and sinceTime checked
    as RFC 3339: each a 400 with Go's text, before anything else (kube's query decoding)."""
    query = {name: values[0] for name in _NAMES if (values := args(scope.request, name.encode()))}
    numbers: dict[str, int] = {}
    try:
        for name in _INTEGERS:
            if name in query:
                numbers[name] = go_parse_int(query[name])
        if query.get("sinceTime"):
            parse_rfc3339(query["sinceTime"])
    except ValueError as e:  # Go's words, from either parser
        raise errors.bad_request(str(e)) from None
    return query, numbers


def _validate(query: dict[str, str], numbers: dict[str, int]) -> list[FieldError]:
    """kube's ValidatePodLogOptions (stream selection off, as in v1.36 by default)."""
    errs: list[FieldError] = []
    if numbers.get("tailLines", 0) < 0:
        errs.append(
            field.invalid("tailLines", numbers["tailLines"], "must be greater than or equal to 0")
        )
    if "limitBytes" in numbers and numbers["limitBytes"] < 1:
        errs.append(field.invalid("limitBytes", numbers["limitBytes"], "must be greater than 0"))
    if "sinceSeconds" in numbers and "sinceTime" in query:
        detail = "at most one of `sinceTime` or `sinceSeconds` may be specified"
        errs.append(field.forbidden("[]", detail))
    elif numbers.get("sinceSeconds", 1) < 1:
        errs.append(
            field.invalid("sinceSeconds", numbers["sinceSeconds"], "must be greater than 0")
        )
    if "stream" in query:
        errs.append(field.forbidden("stream", "may not be specified"))
    return errs


def _names(containers: Any) -> list[str]:
    return [c.get("name", "") for c in containers or [] if isinstance(c, dict)]


def _check_container(pod: dict[str, Any], wanted: str) -> None:
    spec = pod.get("spec") or {}
    name = pod["metadata"]["name"]
    main = _names(spec.get("containers"))
    every = _names(spec.get("initContainers")) + main + _names(spec.get("ephemeralContainers"))
    if wanted:
        if wanted not in every:
            raise errors.bad_request(f"container {wanted} is not valid for pod {name}")
        return
    if len(main) == 1:
        return
    if not main:
        raise errors.bad_request(f"a container name must be specified for pod {name}")
    choices = " ".join(every)  # init, regular, ephemeral: kube's VisitContainers order
    raise errors.bad_request(
        f"a container name must be specified for pod {name}, choose one of: [{choices}]"
    )


async def handle(scope: Scope) -> bytes:
    query, numbers = _options(scope)
    errs = _validate(query, numbers)
    if errs:
        raise errors.invalid("PodLogOptions", "", scope.name, errs)
    pod = (await scope.store.read(scope.namespace, scope.name)).object
    _check_container(pod, query.get("container", ""))
    node_name = (pod.get("spec") or {}).get("nodeName")
    if node_name:
        await kubelet_address(scope, node_name)
        raise errors.unknown(NO_KUBELETS)
    return bare(scope.request, 204)
