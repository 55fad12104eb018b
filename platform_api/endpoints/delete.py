"""delete and deletecollection, with DeleteOptions from the body or the query."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from platform_api import errors, heavy
from platform_api.apiserver.requestinfo import query_flag
from platform_api.authorization.interface import Attributes, Decision
from platform_api.authorization.union import forbidden
from platform_api.codec import BodyError, DepthError, parse_json, parse_yaml
from platform_api.endpoints import list as list_endpoint
from platform_api.endpoints.body import input_types, parse
from platform_api.endpoints.negotiation import CBOR, JSON, PROTOBUF, YAML, Output, input_type
from platform_api.endpoints.options import META_GROUP, arg, args, validate_dry_run
from platform_api.endpoints.scope import Scope
from platform_api.endpoints.typemeta import typemeta_problem
from platform_api.gotext import parse_int as go_parse_int
from platform_api.registry.deletion import deleted_status
from platform_api.scheme.decoding import Decoder
from platform_api.scheme.gonames import DecodeError
from platform_api.scheme.readback import typemeta_field_problem
from platform_api.storage.interface import Preconditions, StorageError
from platform_api.validation import field
from platform_api.validation.field import go_quote

DELETE_OPTIONS = "io.platform.apimachinery.pkg.apis.meta.v1.DeleteOptions"
PROPAGATION = ("Foreground", "Background", "Orphan")
UNSAFE = "ignoreStoreReadErrorWithClusterBreakingPotential"
UNSAFE_VERB = "unsafe-delete-ignore-read-errors"
# kube decodes DeleteOptions with the meta scheme, in which every group version has it.
_META_SCHEME = "pkg/apis/meta/internalversion/scheme/register.go:27"


@dataclass(frozen=True)
class DeleteOptions:
    dry_run: bool = False
    grace_period: int | None = None
    propagation: str | None = None
    orphan_dependents: bool | None = None
    preconditions: Preconditions | None = None
    # ignoreStoreReadErrorWithClusterBreakingPotential: delete an undecodable object.
    unsafe: bool = False


def _from_body(scope: Scope, data: bytes) -> dict[str, Any]:
    media = input_type(scope.content_type(), input_types(False, scope.handlers.cbor))
    if media in (PROTOBUF, CBOR):
        raw, _ = parse(data, media, "DeleteOptions", "meta.k8s.io/v1")
        if isinstance(raw, dict):
            raw.setdefault("apiVersion", "v1")
    else:
        try:
            raw, _ = parse_yaml(data) if media == YAML else parse_json(data)
        except DepthError as e:
            if e.bare:
                raise errors.bad_request(str(e)) from None
            raise errors.bad_request(f"couldn't get version/kind; json parse error: {e}") from None
        except BodyError as e:
            lead = "couldn't get version/kind; json parse error: " if media == JSON else ""
            raise errors.bad_request(lead + str(e)) from None
    if raw is None and media in (JSON, YAML):
        raw = {}  # Go reads null into DeleteOptions as nothing at all
    if not isinstance(raw, dict):
        raise errors.bad_request(typemeta_problem(media, raw))
    problem = typemeta_field_problem(raw) if media != CBOR else ""
    if problem:
        raise errors.bad_request(problem)
    kind = raw.get("kind") or "DeleteOptions"
    if kind != "DeleteOptions":
        version = raw.get("apiVersion") or "meta.platform.io/v1"
        raise errors.bad_request(
            f"no kind {go_quote(str(kind))} is registered for version {go_quote(str(version))} "
            f"in scheme {go_quote(_META_SCHEME)}"
        )
    try:
        decoded: dict[str, Any] = (
            Decoder(scope.handlers.scheme.schemas, cbor=media == CBOR)
            .decode(raw, DELETE_OPTIONS)
            .obj
        )
    except DecodeError as e:
        raise errors.bad_request(str(e)) from None
    return decoded


def _logged_from_body(scope: Scope, data: bytes) -> dict[str, Any]:
    """A body's options, told to the audit event as kube's delete handlers log them:
    decoded to the internal version (which kube names so), nothing when they do not
    decode."""
    audit = scope.ctx.audit_request
    try:
        decoded = _from_body(scope, data)
    except errors.StatusError:
        if audit is not None:
            audit.undecodable()
        raise
    if audit is not None:
        logged = {"kind": "DeleteOptions", "apiVersion": f"{META_GROUP}/__internal"}
        logged.update((k, decoded[k]) for k in _GO_ORDER if decoded.get(k) is not None)
        audit.decoded(logged)
    return decoded


# metav1.DeleteOptions' fields in Go's order.
_GO_ORDER = (
    "gracePeriodSeconds",
    "preconditions",
    "orphanDependents",
    "propagationPolicy",
    "dryRun",
    UNSAFE,
)


def _from_query(scope: Scope) -> dict[str, Any]:
    out: dict[str, Any] = {}
    grace = arg(scope.request, b"gracePeriodSeconds")
    if grace is not None:
        try:
            out["gracePeriodSeconds"] = go_parse_int(grace)
        except ValueError as e:
            raise errors.bad_request(str(e)) from None
    policy = arg(scope.request, b"propagationPolicy")
    if policy is not None:
        out["propagationPolicy"] = policy
    orphan = arg(scope.request, b"orphanDependents")
    if orphan is not None:
        out["orphanDependents"] = query_flag(orphan)
    dry_run = args(scope.request, b"dryRun")
    if dry_run:
        out["dryRun"] = dry_run
    unsafe = arg(scope.request, UNSAFE.encode())
    if unsafe is not None:
        out[UNSAFE] = query_flag(unsafe)
    return out


def _unsafe_conflicts(raw: dict[str, Any]) -> list[field.FieldError]:
    """An unsafe delete takes no other option (kube's ValidateIgnoreStoreReadError)."""
    if raw.get(UNSAFE) is not True:
        return []
    others = ("dryRun", "propagationPolicy", "orphanDependents", "gracePeriodSeconds")
    return [
        field.invalid(UNSAFE, True, f"cannot be set together with .{name}")
        for name in (*others, "preconditions")
        if raw.get(name) not in (None, [])
    ]


def parse_options(scope: Scope) -> DeleteOptions:
    data = scope.body()
    raw = _logged_from_body(scope, data) if data.strip() else _from_query(scope)
    if not scope.handlers.unsafe_delete:  # gate AllowUnsafeMalformedObjectDeletion off
        raw.pop(UNSAFE, None)
    return options_from(raw)


def options_from(raw: dict[str, Any]) -> DeleteOptions:
    """Decoded DeleteOptions, validated as kube's ValidateDeleteOptions (422 otherwise):
    a delete's, or an Eviction's ``deleteOptions``."""
    errs = []
    policy = raw.get("propagationPolicy")
    orphan = raw.get("orphanDependents")
    if orphan is not None and policy is not None:
        errs.append(
            field.invalid(
                "propagationPolicy",
                policy,
                "orphanDependents and deletionPropagation cannot be both set",
            )
        )
    if policy is not None and policy not in PROPAGATION:
        errs.append(field.not_supported("propagationPolicy", policy, [*PROPAGATION, "nil"]))
    dry_run = raw.get("dryRun") or []
    errs += validate_dry_run(dry_run)
    errs += _unsafe_conflicts(raw)
    if errs:
        raise errors.invalid("DeleteOptions", META_GROUP, "", errs)
    pre = raw.get("preconditions")
    preconditions = (
        Preconditions(pre.get("uid"), pre.get("resourceVersion")) if isinstance(pre, dict) else None
    )
    return DeleteOptions(
        dry_run="All" in dry_run,
        grace_period=raw.get("gracePeriodSeconds"),
        propagation=policy,
        orphan_dependents=orphan,
        preconditions=preconditions,
        unsafe=raw.get(UNSAFE) is True,
    )


def _warn_default_propagation(scope: Scope, options: DeleteOptions) -> None:
    """kube's Job REST warns, before it looks the object up, when a delete leaves the
    policy to the kind's default of orphaning."""
    warning = scope.store.strategy.default_propagation_warning
    if warning and options.propagation is None and options.orphan_dependents is None:
        scope.ctx.warn(warning)


async def handle(scope: Scope) -> bytes:
    out = scope.write_output()
    options = await heavy.run(parse_options, scope)
    if scope.body():
        scope.event("limitedReadBody succeeded", len=len(scope.body()))
    scope.event("Decoded delete options")
    scope.event("Recorded the audit event")
    scope.ctx.dry_run = options.dry_run
    if options.unsafe:
        return await _unsafe_delete(scope, out)
    _warn_default_propagation(scope, options)
    refused = getattr(scope.store.strategy, "refuses_delete", None)
    why = refused(scope.name) if refused is not None else ""
    if why:  # kube's REST storage of the kind, before it reads anything
        rt = scope.resource
        raise errors.forbidden(rt.plural, rt.group, scope.name, why)
    validate = scope.handlers.admission.validator(scope, "DELETE")

    async def admit(obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        # kube's deleteValidation: mutating, then validating admission, once the object
        # is read and its preconditions hold
        await scope.handlers.admission.admit(scope, "DELETE", None)
        await validate(obj, old)

    scope.event("About to delete object from database")
    stored, deleted = await scope.store.delete(
        scope.namespace,
        scope.name,
        preconditions=options.preconditions,
        dry_run=options.dry_run,
        admit=admit,
        propagation=options.propagation,
        orphan=options.orphan_dependents,
        grace_period=options.grace_period,
    )
    scope.event("Object deleted from database")
    stored = await scope.store.served(stored)
    if not deleted:
        # Finalizers keep it: kube answers the terminating object, 202 only for the
        # deprecated orphanDependents=false.
        code = 202 if options.orphan_dependents is False else 200
        return await scope.respond_object(stored, code, out)
    if scope.store.strategy.returns_deleted_object:
        return await scope.respond_object(stored, 200, out)
    rt = scope.store.resource
    status = deleted_status(rt.group, rt.plural, stored.object)
    if scope.ctx.render_group:
        status["details"]["group"] = scope.ctx.render_group
    return await scope.respond_object(status, 200, out)


async def _unsafe_delete(scope: Scope, out: Output) -> bytes:
    """Remove an object that no longer decodes, skipping finalizers and admission.

    Only for corrupt objects (422 otherwise), and only for callers also allowed the
    ``unsafe-delete-ignore-read-errors`` verb on the resource.
    """
    rt, store = scope.resource, scope.store
    current = store.get_as_stored(scope.namespace, scope.name)
    try:
        current.object  # noqa: B018 - decoding is the test
    except (ValueError, StorageError):
        pass
    else:
        why = "is exclusively used to delete corrupt object(s), try again by removing this option"
        raise errors.invalid(rt.plural, rt.group, scope.name, [field.invalid(UNSAFE, True, why)])
    authorizer = scope.handlers.authorizer
    if authorizer is not None:
        attrs = replace(Attributes.from_request(scope.ctx.user, scope.info), verb=UNSAFE_VERB)
        decision, reason = await authorizer.authorize(attrs)
        if decision is not Decision.ALLOW:
            raise forbidden(attrs, reason)
    meta = {"name": scope.name, "namespace": scope.namespace} if rt.namespaced else {}
    stand_in = {
        "kind": rt.kind,
        "apiVersion": rt.api_version,
        "metadata": meta or {"name": scope.name},
    }
    await store.storage.delete_corrupt(current.key, stand_in)
    status = deleted_status(store.resource.group, store.resource.plural, stand_in)
    return await scope.respond_object(status, 200, out)


async def handle_collection(scope: Scope) -> bytes:
    out = scope.write_output(is_list=True)
    params = list_endpoint.parse_params(scope, watch=False)
    options = await heavy.run(parse_options, scope)
    scope.ctx.dry_run = options.dry_run
    _warn_default_propagation(scope, options)
    result = await list_endpoint.read_list(scope, params)
    admit = scope.handlers.admission.validator(scope, "DELETE")
    for item in result.items:
        meta = item.object["metadata"]
        try:
            await scope.store.delete(
                # the request's namespace, as kube's store deletes in the request's
                # context: ``/namespaces//configmaps`` lists every namespace's and is
                # refused at the first ("Namespace parameter required."), none deleted
                scope.namespace if scope.resource.namespaced else "",
                meta["name"],
                dry_run=options.dry_run,
                admit=admit,
                propagation=options.propagation,
                orphan=options.orphan_dependents,
                grace_period=options.grace_period,
            )
        except errors.StatusError as e:
            if e.code != 404:  # deleted meanwhile: still in the answer, as in kube
                raise
    # kube answers the list it deleted from, as it was listed.
    removed = [await scope.store.served(item) for item in result.items]
    meta = {"resourceVersion": str(result.revision)}
    body = list_endpoint.render_list(scope, out, removed, meta)
    return scope.finish(200, body, out)
