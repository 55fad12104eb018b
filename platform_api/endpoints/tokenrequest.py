"""serviceaccounts/<name>/token: TokenRequest, a signed token for the account.

Rules as kube's TokenRequest REST: ``expirationSeconds`` defaults to an hour and is at
least ten minutes (capped by ``--service-account-max-token-expiration``), audiences
default to the API's, and a ``boundObjectRef`` names a Pod or Secret of the same
namespace whose uid, when given, must match.  Nothing is stored.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from platform_api import errors
from platform_api.endpoints.body import decode_subresource
from platform_api.endpoints.scope import Scope
from platform_api.scheme.decoding import format_time
from platform_api.validation import field

Obj = dict[str, Any]
DEFINITION = "io.platform.api.authentication.v1.TokenRequest"
API_VERSION = "authentication.platform.io/v1"
DEFAULT_SECONDS = 3600
MIN_SECONDS = 600
MAX_SECONDS = 1 << 32
_BINDABLE = {"Pod": ("", "v1", "pods"), "Secret": ("", "v1", "secrets")}


def _seconds(spec: Obj, name: str, cap: float) -> int:
    seconds = spec.get("expirationSeconds")
    if seconds is None:
        seconds = DEFAULT_SECONDS
    why = ""
    if seconds < MIN_SECONDS:
        why = "may not specify a duration less than 10 minutes"
    elif seconds > MAX_SECONDS:
        why = "may not specify a duration larger than 2^32 seconds"
    if why:
        errs = [field.invalid("spec.expirationSeconds", seconds, why)]
        raise errors.invalid("TokenRequest", "authentication.platform.io", name, errs)
    if cap and seconds > cap:
        seconds = int(cap)
    return int(seconds)


def _bound(scope: Scope, ref: Obj) -> tuple[str, Obj]:
    kind, version = ref.get("kind", ""), ref.get("apiVersion", "")
    if kind not in _BINDABLE or version not in ("", "v1"):
        gvk = f"{version or '/'}, Kind={kind}" if "/" in version else f"/{version}, Kind={kind}"
        raise errors.bad_request(f"cannot bind token to object of type {gvk}")
    store = scope.handlers.stores[_BINDABLE[kind]]
    obj = store.get(scope.namespace, ref.get("name", "")).object
    if ref.get("uid") and ref["uid"] != obj["metadata"].get("uid"):
        raise errors.conflict(
            kind,
            "",
            ref.get("name", ""),
            f"the UID in the bound object reference ({ref['uid']}) does not match the UID in "
            "record. The object might have been deleted and then recreated",
        )
    return kind, obj


async def create(scope: Scope) -> bytes:
    accounts = scope.handlers.service_accounts
    if accounts is None:
        raise errors.path_not_found()
    request = decode_subresource(scope, "CreateOptions", "TokenRequest", DEFINITION, API_VERSION)
    await scope.handlers.admission.admit(scope, "CREATE", request, scope.name)
    account = scope.store.get(scope.namespace, scope.name).object
    meta, account_uid = request["metadata"], account["metadata"].get("uid", "")
    if meta.get("uid") and meta["uid"] != account_uid:  # TokenRequestServiceAccountUIDValidation
        why = (
            f"the UID in the token request ({meta['uid']}) does not match the UID of the "
            f"service account ({account_uid})"
        )
        raise errors.conflict("TokenRequest", "authentication.platform.io", scope.name, why)
    spec = request.setdefault("spec", {})
    seconds = _seconds(spec, scope.name, accounts.max_expiration)
    spec["audiences"] = spec.get("audiences") or list(accounts.audiences)
    spec["expirationSeconds"] = seconds
    bound = _bound(scope, spec["boundObjectRef"]) if spec.get("boundObjectRef") else None
    token, expires = accounts.issuer.issue(account, spec["audiences"], seconds, bound)
    meta.update(name=scope.name, namespace=scope.namespace, uid=account_uid)
    meta["creationTimestamp"] = scope.store.now()
    spec.setdefault("boundObjectRef", None)  # no omitempty in Go's TokenRequestSpec
    request["status"] = {
        "token": token,
        "expirationTimestamp": format_time(datetime.fromtimestamp(expires, UTC)),
    }
    return scope.respond_object(request, 201)
