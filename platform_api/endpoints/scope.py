"""What every verb handler works with: the request, its target, and the server's parts."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from twisted.internet.interfaces import IReactorTime
from twisted.web.server import Request

from platform_api import errors, heavy
from platform_api.apiserver.requestinfo import RequestInfo
from platform_api.context import Context
from platform_api.endpoints import binary, serializespan
from platform_api.endpoints.fieldversions import CallOut, versions_for
from platform_api.endpoints.freshness import Freshness
from platform_api.endpoints.negotiation import Output, negotiate_output, partial_refusal
from platform_api.endpoints.ownerrefs import AFTER_ADMISSION, dedup_owner_references
from platform_api.endpoints.responses import audit_binary, encode, finish, is_pretty
from platform_api.endpoints.serializespan import Serialized
from platform_api.endpoints.views import (
    answered_type,
    held_type,
    is_status,
    partial_object,
    table_body,
)
from platform_api.fieldmanager.manager import FieldManager, Who, for_resource, update_tracker
from platform_api.fieldmanager.typed import Typed
from platform_api.registry.store import Admit, Mutate, Store, Track, UpdateFunc
from platform_api.scheme import bytefields
from platform_api.scheme.catalog import Scheme
from platform_api.scheme.types import ResourceType
from platform_api.storage.interface import (
    Storage,
    Stored,
)
from platform_api.storage.watch import WatchHub

if TYPE_CHECKING:
    from platform_api.admission.chain import AdmissionChain
    from platform_api.apiserver.serviceaccounts import ServiceAccounts
    from platform_api.authentication.union import RequestAuthenticator
    from platform_api.authorization.interface import Authorizer
    from platform_api.endpoints.tables import TableConvertor
    from platform_api.scheme.aliases import Aliases

T = TypeVar("T")
Obj = dict[str, Any]


@dataclass
class Handlers(Freshness):
    """The server's parts the verb handlers share (one per server)."""

    scheme: Scheme
    storage: Storage
    stores: dict[tuple[str, str, str], Store]
    admission: AdmissionChain
    tables: TableConvertor
    hub: WatchHub
    reactor: IReactorTime
    # Seconds a read of a future resourceVersion waits before 504.
    too_large_rv_wait: float = 3.0
    min_request_timeout: float = 1800.0  # --min-request-timeout: a watch's least lifetime
    storage_prefix: str = "/registry"  # --etcd-prefix: kube's storage errors quote keys under it
    extras: dict[str, Any] = field(default_factory=dict)
    # For the checks a handler makes itself (kube's unsafe delete of corrupt objects).
    authorizer: Authorizer | None = None
    authenticator: RequestAuthenticator | None = None  # TokenReview runs its token methods
    service_accounts: ServiceAccounts | None = None  # TokenRequest issues with it
    field_managers: dict[str, FieldManager] = field(default_factory=dict)
    # The CRDs' conversions to any version, by (group, plural), which the CRD installer
    # keeps: the field managers of webhook-converted kinds call them.
    converters: dict[tuple[str, str], CallOut] = field(default_factory=dict)
    # Protobuf messages and CBOR items of stored revisions, each encoded once
    # (see endpoints/binary.py).
    messages: binary.EncodedCache = field(default_factory=binary.message_cache)
    cbor_items: binary.EncodedCache = field(default_factory=binary.cbor_cache)
    aliases: Aliases | None = None  # upstream group names, when served
    cbor: bool = False  # CBOR requests and answers (gate CBORServingAndStorage)
    # Feature gates the handlers consult (kube's defaults; service.py sets them).
    watch_list: bool = True  # sendInitialEvents on watches (WatchList)
    compression: bool = True  # gzip of large get/list answers (APIResponseCompression)
    unsafe_delete: bool = False  # deleting corrupt objects (AllowUnsafeMalformedObjectDeletion)
    binding_labels: bool = True  # a Binding's labels reach the pod (PodTopologyLabelsAdmission)
    clear_nomination: bool = True  # binding clears it (ClearingNominatedNodeNameAfterBinding)
    flags: Callable[[], dict[str, str]] = dict  # every flag's value, for /flagz
    flagz: bool = True  # /flagz is served (ComponentFlagz)
    statusz: bool = True  # /statusz is served (ComponentStatusz)

    def store(self, rt: ResourceType) -> Store:
        return self.stores[(rt.group, rt.version, rt.plural)]

    def field_manager(self, rt: ResourceType) -> FieldManager:
        """The ownership tracker of a resource type (one per schema, built on first use
        and again when a CRD's change replaces the schema)."""
        key = f"{rt.group}/{rt.version}/{rt.plural}"
        found = self.field_managers.get(key)
        manager = for_resource(self.scheme.schemas, rt, found)
        if manager is not found:
            manager.versions = versions_for(
                self.scheme, self.stores, self.field_manager, rt, self.converters
            )
            strategy = self.stores[(rt.group, rt.version, rt.plural)].strategy
            if strategy.status_writes_metadata:  # kube's reset fields of its /status
                kept = ("generation", *strategy.status_keeps_old_metadata)
                manager.status_keeps_metadata = frozenset(kept)
            manager.reset = {
                sub: tuple(tuple(f"f:{key}" for key in path.split(".")) for path in paths)
                for sub, paths in getattr(strategy, "reset_fields", {}).items()
            }
            self.field_managers[key] = manager
        return manager

    def kind_field_manager(self, definition: str) -> FieldManager:
        """The tracker of a sub-resource's own kind (a TokenRequest), which has no status
        of its own to keep apart."""
        manager = self.field_managers.get(definition)
        if manager is None:
            schemas = self.scheme.schemas
            manager = FieldManager(Typed(schemas), schemas.get(definition), False)
            self.field_managers[definition] = manager
        return manager


@dataclass
class Scope:
    """One resource request after routing."""

    request: Request
    info: RequestInfo
    ctx: Context
    resource: ResourceType
    store: Store
    handlers: Handlers

    @property
    def namespace(self) -> str:
        return self.info.namespace

    @property
    def name(self) -> str:
        return self.info.name

    def output(self, table: bool = False, partial: str = "") -> Output:
        """The answer's encoding and view, from Accept; Protobuf for built-in kinds only.
        ``partial`` ("object" or "list") allows PartialObjectMetadata (get, list, watch)."""
        accept = (self.request.getHeader(b"accept") or b"").decode("latin-1")
        out = negotiate_output(
            accept,
            table=table,
            protobuf=not self.resource.custom,
            partial=partial,
            cbor=self.handlers.cbor,
        )
        return dataclasses.replace(out, pretty=True) if is_pretty(self.request) else out

    def write_output(self, is_list: bool = False) -> Output:
        """A write's answer type (a Scale's read's too): kube's writes answer metadata
        alone too, and those of the object and its status a Table (AllowsMediaTypeTransform,
        where the storage converts to tables), refusing metadata of the other shape once
        they hold it."""
        table = self.info.subresource in ("", "status")
        return self.output(table=table, partial="list" if is_list else "object")

    def check_partial(self, out: Output, is_list: bool, definition: str = "") -> None:
        """kube's 406 when metadata of the other shape was asked for, naming the Go type
        its handler holds (views.held_type)."""
        if out.refused:
            go_type = held_type(self.resource, is_list, definition)
            raise errors.not_acceptable_because(partial_refusal(out, go_type))

    def who(self) -> Who:
        rt = self.resource
        return Who(self.ctx.field_manager, rt.api_version, self.info.subresource)

    def tracker(self) -> Track:
        """Records the request as an Update in the object's managedFields, handing the
        object first to the audit event that records it (decoded and defaulted: as the
        tracker gets it)."""
        track = update_tracker(
            self.handlers.field_manager(self.resource), self.who(), self.store.now
        )
        audit = self.ctx.audit_request
        if audit is None or self.info.subresource not in ("", "status"):
            return track

        def audited(live: Obj | None, new: Obj) -> None:
            audit.decoded(self.outgoing(new), defaulted=True)
            track(live, new)

        return audited

    async def update(self, updated: UpdateFunc, *, apply: bool = False) -> tuple[Stored, bool]:
        """Update the addressed object through admission, as an Update or (``apply``)
        with ownership already settled by the update function, which may also create."""
        return await self.store.update(
            self.namespace,
            self.name,
            updated,
            dry_run=self.ctx.dry_run,
            admit=self.validator("UPDATE"),
            subresource=self.info.subresource,
            force_allow_create=apply and not self.info.subresource,
            track=None if apply else self.tracker(),
            mutate=self.mutator(),
            applied=apply,
        )

    def mutator(self) -> Mutate:
        """Mutating admission for the store's write, then kube's owner-reference dedup
        of what admission left."""
        admit = self.handlers.admission.mutator(self)
        warn = self.ctx.warn

        async def mutate(obj: Obj, old: Obj | None) -> Obj:
            if admit is not None:
                obj = await admit(obj, old)
            dedup_owner_references(obj, warn, AFTER_ADMISSION)
            return obj

        return mutate

    def validator(self, operation: str) -> Admit:
        """What the store checks on the object it is about to write: the kind's warnings
        (kube's WarningsOnCreate/Update), the store's own guard (escalation prevention of
        roles and bindings), then validating admission."""
        admit = self.handlers.admission.validator(self, operation)
        guard, strategy = self.store.guard, self.store.strategy
        subresource = self.info.subresource
        if subresource in self.store.subresource_strategies:  # /status warns of nothing
            strategy = self.store.subresource_strategies[subresource]

        async def validate(obj: Obj, old: Obj | None) -> None:
            for text in strategy.warnings(obj, old):
                self.ctx.warn(text)
            if guard is not None:  # kube's RBAC storage refuses escalation before admission
                await guard.check(self.ctx.user, self.namespace, obj, old)
            await admit(obj, old)

        return validate

    def content_type(self) -> str:
        return (self.request.getHeader(b"content-type") or b"").decode("latin-1")

    def body(self) -> bytes:
        """The body, or what kube's handler meets reading it (webrequest.APIRequest)."""
        problem = getattr(self.request, "body_problem", None)
        if problem is not None:
            raise problem
        content = self.request.content
        if content is None:
            return b""
        content.seek(0)
        data: bytes = content.read()
        return data

    def outgoing(self, obj: Obj) -> Obj:
        """An object as this request's client sees it: in the upstream group it named."""
        aliases = self.handlers.aliases
        if aliases is None or not self.ctx.render_group:
            return obj
        return aliases.rename(obj, self.ctx.render_group)

    def outgoing_api_version(self, api_version: str) -> str:
        """An apiVersion as this request's client sees it (its upstream group name)."""
        return str(self.outgoing({"apiVersion": api_version})["apiVersion"])

    def serialized(self, out: Output) -> Serialized | None:
        """kube's SerializeObject span of this handler's answer, when the request is
        traced: encoded in the endpoint's group version, or the view's (a Table)."""
        trace = self.ctx.trace
        version = trace.handler_version if trace is not None else None
        if version is None:
            return None
        if out.view in ("table", "partial"):
            version = f"{out.group}/{out.version}"
        return serializespan.for_object(out.encoding, out.pretty, version)

    def finish(self, code: int, body: bytes, out: Output) -> bytes:
        """The handler's answer in ``out``: its headers, compressed as kube compresses
        what its serializers write, and kube's span when traced."""
        return finish(
            self.request,
            code,
            body,
            out.content_type,
            ctx=self.ctx,
            compressible=True,
            serialized=self.serialized(out),
        )

    def event(self, name: str, **attributes: Any) -> None:
        """A span event of kube's handlers, when the request is traced."""
        trace = self.ctx.trace
        if trace is not None:
            trace.event(name, attributes)

    def written(self, write: Awaitable[T]) -> Awaitable[T]:
        """A create's or update's write, between kube's handler span events when the
        request is traced (the write itself, no wrapper, when it is not)."""
        trace = self.ctx.trace
        return write if trace is None else self._traced_write(trace, write)

    async def _traced_write(self, trace: Any, write: Awaitable[T]) -> T:
        trace.event("About to store object in database", {})
        size = len(self.body())
        try:
            result = await write
        except Exception as e:
            trace.event("Write to database call failed", {"len": size, "err": str(e)})
            raise
        trace.event("Write to database call succeeded", {"len": size})
        return result

    def respond_object(
        self, stored: Stored | Obj, code: int = 200, out: Output | None = None
    ) -> Awaitable[bytes]:
        """One object in the negotiated format (kube's handler span events around it
        when the request is traced)."""
        trace = self.ctx.trace
        if trace is None or not trace.writes_response_events:
            return self._respond_object(stored, code, out)
        return self._traced_response(trace, self._respond_object(stored, code, out))

    async def _traced_response(self, trace: Any, response: Awaitable[bytes]) -> bytes:
        trace.event("About to write a response", {})
        try:
            return await response
        finally:
            trace.event("Writing http response done", {})

    async def _respond_object(
        self, stored: Stored | Obj, code: int = 200, out: Output | None = None
    ) -> bytes:
        """Stored JSON bytes go out untouched, and a stored revision is encoded in
        Protobuf once (the server's message cache).  YAML (PyYAML writes about 1.5 MB a
        second) is written on a thread for a large object."""
        out = out or self.output()
        if out.view and is_status(stored):  # kube hands a Status through any view
            out = dataclasses.replace(out, view="", refused="")
        if out.view == "table":
            obj = stored.object if isinstance(stored, Stored) else stored
            return self.finish(code, table_body(self, obj, out), out)
        audit_binary(self.ctx, out.encoding, lambda: self._answered_as_json(stored, out))
        # The stored bytes, when the answer is all of them as stored.
        whole = stored if isinstance(stored, Stored) and out.view != "partial" else None
        if self.ctx.render_group:
            whole = None
        if whole is not None and out.plain_json:
            body = whole.data + b"\n"  # as encode() ends JSON
        elif whole is not None and out.encoding == "cbor":
            body = binary.cbor_object_body(self.handlers.cbor_items, whole)
        else:
            if out.encoding == "yaml" and isinstance(stored, Stored):
                heavy.mark(self.handlers.reactor, len(stored.data))
            body = await heavy.run(self._encoded, stored, out)
        return self.finish(code, body, out)

    def _answered_as_json(self, stored: Stored | Obj, out: Output) -> Obj:
        """A binary answer's object as its JSON answer would carry it (for the audit)."""
        obj = stored.object if isinstance(stored, Stored) else stored
        if out.view == "partial":
            obj = partial_object(obj, out)
        return self.outgoing(obj)

    def _encoded(self, stored: Stored | Obj, out: Output) -> bytes:
        """The answer's body when the stored bytes are not it: the object decoded (once per
        revision: ``Stored.object`` is shared), cut to its metadata for a partial view,
        renamed for a client of the upstream groups, encoded.  On the request's thread
        when it is large (a YAML answer of a large object)."""
        obj = stored.object if isinstance(stored, Stored) else stored
        if out.view == "partial":
            self.check_partial(out, is_list=False, definition=answered_type(self, obj))
            stored = obj = partial_object(obj, out)
        if out.encoding == "protobuf":
            api_version = self.outgoing_api_version(obj.get("apiVersion", ""))
            return binary.object_body(self.handlers.messages, stored, api_version)
        fields = bytefields.for_object(obj) if out.encoding == "cbor" else None
        return encode(self.outgoing(obj), out.encoding, out.pretty, fields)
