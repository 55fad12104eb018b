"""serviceaccounts/<name>/token: TokenRequest, a signed token for the account.

Rules as kube's TokenRequest REST: ``expirationSeconds`` defaults to an hour and is at
least ten minutes (capped by ``--service-account-max-token-expiration``), audiences
default to the API's, and a ``boundObjectRef`` names a Pod or Secret of the same
namespace, or a Node, whose uid, when given, must match; a pod-bound token also names
the pod's node.  The steps run in kube's order: mutating admission, the names, the
account, validation, validating admission, the bound object.  Nothing is stored.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import orjson

from platform_api import errors
from platform_api.authentication.serviceaccount import EXTENDED_FROM, SigningError
from platform_api.codec.goshape import DECODED, STORED, shape
from platform_api.endpoints.body import decode_subresource
from platform_api.endpoints.scope import Scope
from platform_api.fieldmanager.manager import Who
from platform_api.timestamps import format_time
from platform_api.validation import field

Obj = dict[str, Any]
DEFINITION = "io.platform.api.authentication.v1.TokenRequest"
API_VERSION = "authentication.platform.io/v1"
DEFAULT_SECONDS = 3600
MIN_SECONDS = 600
MAX_SECONDS = 1 << 32
GROUP = "authentication.platform.io"
_BINDABLE = {"Pod": "pods", "Secret": "secrets", "Node": "nodes"}
# The bound object (its kind and itself) and the node the token names.
Bound = tuple[tuple[str, Obj] | None, Obj | None]


def _seconds(spec: Obj) -> int:
    """``ValidateTokenRequest``: kube names no object in its error (the name is "")."""
    seconds = spec["expirationSeconds"]
    why = ""
    if seconds < MIN_SECONDS:
        why = "may not specify a duration less than 10 minutes"
    elif seconds > MAX_SECONDS:
        why = "may not specify a duration larger than 2^32 seconds"
    if why:
        errs = [field.invalid("spec.expirationSeconds", seconds, why)]
        raise errors.invalid("TokenRequest", GROUP, "", errs)
    return int(seconds)


async def _lookup(scope: Scope, kind: str, namespace: str, name: str) -> Obj:
    if not name:  # the registry's answer to a get without a name
        raise errors.bad_request("Name parameter required.")
    store = scope.handlers.stores[("", "v1", _BINDABLE[kind])]
    return (await scope.handlers.current(store, namespace, name)).object


async def _bound(scope: Scope, account: str, ref: Obj) -> Bound:
    """The object a token is bound to and the node it tells of (kube matches the kind
    and the core group; the version is not looked at)."""
    kind, version = ref.get("kind", ""), ref.get("apiVersion", "")
    group = version.rpartition("/")[0]
    if group or kind not in _BINDABLE:
        shown = f"{version}, Kind={kind}" if "/" in version else f"/{version}, Kind={kind}"
        raise errors.bad_request(f"cannot bind token to object of type {shown}")
    namespace = "" if kind == "Node" else scope.namespace
    obj = await _lookup(scope, kind, namespace, ref.get("name", ""))
    node = obj if kind == "Node" else None
    if kind == "Pod":
        if (obj.get("spec") or {}).get("serviceAccountName") != account:
            raise errors.bad_request(
                f'cannot bind token for serviceaccount "{account}" to pod running with '
                "different serviceaccount name."
            )
        node = await _pod_node(scope, obj)
    uid = obj["metadata"].get("uid", "")
    if ref.get("uid") and ref["uid"] != uid:
        raise errors.conflict(
            kind,
            "",
            ref.get("name", ""),
            f"the UID in the bound object reference ({ref['uid']}) does not match the UID in "
            "record. The object might have been deleted and then recreated",
        )
    return (kind, obj), node


async def _pod_node(scope: Scope, pod: Obj) -> Obj | None:
    """The node a pod runs on, for the token's claims (its name alone when it is gone)."""
    name = (pod.get("spec") or {}).get("nodeName")
    if not name:
        return None
    try:
        return await _lookup(scope, "Node", "", name)
    except errors.StatusError as e:
        if e.code != 404:
            raise errors.internal_error(e) from None
        return {"metadata": {"name": name}}


def _check_names(scope: Scope, meta: Obj) -> None:
    for key, value, what in (
        ("name", scope.name, "name"),
        ("namespace", scope.namespace, "namespace"),
    ):
        if meta.get(key) and meta[key] != value:
            why = f"must match the service account {what} if specified"
            errs = [field.invalid(f"metadata.{key}", meta[key], why)]
            raise errors.invalid("TokenRequest", GROUP, scope.name, errs)


async def create(scope: Scope) -> bytes:
    accounts = scope.handlers.service_accounts
    if accounts is None:
        raise errors.path_not_found()
    request = await decode_subresource(
        scope, "CreateOptions", "TokenRequest", DEFINITION, API_VERSION
    )
    spec = request.setdefault("spec", {})
    if spec.get("expirationSeconds") is None:  # the type's default, before field tracking
        spec["expirationSeconds"] = DEFAULT_SECONDS
    _audit(scope, request)
    _track(scope, request)
    await scope.handlers.admission.admit(scope, "CREATE", request, scope.name)
    meta = request.setdefault("metadata", {})
    _check_names(scope, meta)
    account = (await scope.handlers.current(scope.store, scope.namespace, scope.name)).object
    account_uid = account["metadata"].get("uid", "")
    if meta.get("uid") and meta["uid"] != account_uid:  # TokenRequestServiceAccountUIDValidation
        why = (
            f"the UID in the token request ({meta['uid']}) does not match the UID of the "
            f"service account ({account_uid})"
        )
        raise errors.conflict("TokenRequest", GROUP, scope.name, why)
    spec["audiences"] = spec.get("audiences") or list(accounts.audiences)
    meta.update(name=scope.name, namespace=scope.namespace, uid=account_uid)
    meta["creationTimestamp"] = scope.store.now()
    request.pop("status", None)
    seconds = _seconds(spec)
    await scope.handlers.admission.validator(scope, "CREATE")(request, None)
    bound, node = (
        await _bound(scope, scope.name, spec["boundObjectRef"])
        if spec.get("boundObjectRef")
        else (None, None)
    )
    if accounts.max_expiration and seconds > accounts.max_expiration:
        cap = int(accounts.max_expiration)
        scope.ctx.warn(f"requested expiration of {seconds} seconds shortened to {cap} seconds")
        seconds = spec["expirationSeconds"] = cap
    lifetime, warn_after = seconds, 0
    if _extended(accounts.extend_expiration, accounts.audiences, spec, bound):
        lifetime, warn_after = accounts.max_extended, seconds
    try:
        token, issued = await accounts.issuer.issue(
            account, spec["audiences"], lifetime, bound, node, warn_after
        )
    except SigningError as e:
        raise errors.internal_error(f"failed to generate token: {e}") from None
    spec.setdefault("boundObjectRef", None)  # no omitempty in Go's TokenRequestSpec
    request["status"] = {  # the time asked for, even when the token lasts longer
        "token": token,
        "expirationTimestamp": format_time(datetime.fromtimestamp(issued + seconds, UTC)),
    }
    return await scope.respond_object(request, 201)


def _extended(enabled: bool, api_audiences: tuple[str, ...], spec: Obj, bound: Any) -> bool:
    """kube's safe transition (--service-account-extend-token-expiration): a pod-bound
    token asked for exactly as the ServiceAccount admission plugin asks, for the API's
    own audiences, lasts a year, and is reported stale once past what it asked for."""
    return (
        enabled
        and bound is not None
        and bound[0] == "Pod"
        and spec["expirationSeconds"] == EXTENDED_FROM
        and set(spec["audiences"]) <= set(api_audiences)
    )


def _audit(scope: Scope, request: Obj) -> None:
    """kube logs the request as its Go type decodes it: defaulted, every field of the
    struct written in its order (``"audiences": null``, ``"boundObjectRef": null``)."""
    audit = scope.ctx.audit_request
    if audit is None:
        return
    logged = orjson.loads(orjson.dumps(request))
    shape(logged, DECODED)
    shape(logged, STORED)  # Go's field order
    audit.decoded(scope.outgoing(logged), defaulted=True)


def _track(scope: Scope, request: Obj) -> None:
    """kube's create handler records the request in its managedFields, as an Update of
    the ``token`` sub-resource."""
    manager = scope.handlers.kind_field_manager(DEFINITION)
    who = Who(scope.ctx.field_manager, API_VERSION, scope.info.subresource)
    manager.update(None, request, who, scope.store.now())
