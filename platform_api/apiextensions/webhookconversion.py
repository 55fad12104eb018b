"""Conversion by webhook: a ConversionReview POSTed to the CRD's conversion service.

As kube's webhook converter: objects already in the wanted version are not sent; the
answer must echo the request's uid, report Success and return as many objects as
were sent, each of the wanted version and the same kind, name, namespace and uid.
Only labels and annotations of a converted object's metadata are taken from the
webhook; the rest is restored from the original.  Failures are kube's bare 500s (its
converter's own error, not a Status) naming the webhook and the call as Go's client
words it (``Post "https://...?timeout=30s": dial tcp ...: connect: connection refused``).
"""

from __future__ import annotations

import base64
from typing import Any

import orjson

from platform_api import errors
from platform_api.apiextensions import crd as crds
from platform_api.client.goerrors import go_error, status_text
from platform_api.client.kubeconfig import Connection
from platform_api.registry.serviceresolver import ResolveError, ServiceResolver
from platform_api.uid import new_uid

Obj = dict[str, Any]
REVIEW_GROUP = "apiextensions.platform.io"
SUPPORTED_REVIEWS = ("v1", "v1beta1")
TIMEOUT = 30.0


class ConversionError(Exception):
    pass


def _gvk(obj: Obj) -> str:
    """Go's ``GroupVersionKind.String()``: ``group/version, Kind=Kind``."""
    return f"{obj.get('apiVersion', '')}, Kind={obj.get('kind', '')}"


class WebhookConverter:
    """Calls one CRD's conversion webhook; ``reactor`` drives the treq client."""

    def __init__(
        self,
        crd: Obj,
        resolver: ServiceResolver | None,
        reactor: Any,
        review_group: str = REVIEW_GROUP,
    ) -> None:
        webhook = (crd["spec"].get("conversion") or {}).get("webhook") or {}
        self.review_group = review_group
        self.config: Obj = webhook.get("clientConfig") or {}
        wanted = webhook.get("conversionReviewVersions") or []
        self.review_version = next((v for v in wanted if v in SUPPORTED_REVIEWS), "")
        self.resolver = resolver
        self.reactor = reactor
        self._client: Any = None
        self._client_key: tuple[str, str] | None = None
        self.ca_pem = (
            base64.b64decode(self.config["caBundle"]) if self.config.get("caBundle") else None
        )

    def _connection(self) -> Connection:
        url = self.config.get("url")
        if url:
            return Connection(server=url, ca_pem=self.ca_pem)
        service = self.config.get("service") or {}
        namespace, name = service.get("namespace", ""), service.get("name", "")
        port, path = int(service.get("port") or 443), service.get("path") or ""
        shown = f"https://{name}.{namespace}.svc:{port}{path}"
        if self.resolver is None:
            raise ConversionError(f'Post "{_with_timeout(shown)}": no service resolver')
        try:
            address = self.resolver.resolve(namespace, name, port)
        except ResolveError as e:
            raise ConversionError(f'Post "{_with_timeout(shown)}": {e}') from None
        return Connection(
            server=address.url(path),
            ca_pem=self.ca_pem,
            tls_server_name=address.server_name,
            shown=shown,
        )

    def _http(self, connection: Connection) -> Any:
        key = (connection.server, connection.tls_server_name)
        if self._client is None or self._client_key != key:
            self._client, self._client_key = connection.client(self.reactor), key
        return self._client

    async def convert(self, objs: list[Obj], api_version: str, what: Obj) -> list[Obj]:
        """``objs`` in ``api_version``; ``what`` is the object or list being converted
        (its apiVersion and kind name the conversion in error messages)."""
        todo = [i for i, obj in enumerate(objs) if obj.get("apiVersion") != api_version]
        if not todo:
            return objs
        sent = [objs[i] for i in todo]
        try:
            converted = await self._call(sent, api_version)
        except ConversionError as e:
            raise errors.unknown(f"conversion webhook for {_gvk(what)} failed: {e}") from None
        if len(converted) != len(sent):
            raise errors.unknown(
                f"conversion webhook for {_gvk(what)} returned {len(converted)} objects, "
                f"expected {len(sent)}"
            )
        out = list(objs)
        for position, (index, result) in enumerate(zip(todo, converted, strict=True)):
            out[index] = _checked(objs[index], result, api_version, what, position)
        return out

    async def _call(self, objs: list[Obj], api_version: str) -> list[Obj]:
        if not self.review_version:
            raise ConversionError("no supported conversion review versions")
        connection = self._connection()
        uid = new_uid()
        review_version = f"{self.review_group}/{self.review_version}"
        review = {
            "kind": "ConversionReview",
            "apiVersion": review_version,
            "request": {"uid": uid, "desiredAPIVersion": api_version, "objects": objs},
        }
        try:
            reply = await self._http(connection).post(
                _with_timeout(connection.server),
                data=orjson.dumps(review),
                headers={"Content-Type": "application/json", "Accept": "application/json"},
                timeout=TIMEOUT,
            )
            body = await reply.content()
        except Exception as e:
            why = go_error(e, connection.server)
            shown = _with_timeout(connection.shown or connection.server)
            raise ConversionError(f'Post "{shown}": {why}') from None
        if not 200 <= reply.code < 300:
            raise ConversionError(status_text(reply.code, body))
        return _converted_objects(body, review_version, uid)


def _with_timeout(url: str) -> str:
    """The URL with the deadline kube's client sends the webhook (``?timeout=30s``)."""
    return f"{url}{'&' if '?' in url else '?'}timeout={TIMEOUT:.0f}s"


def _converted_objects(body: bytes, review_api_version: str, uid: str) -> list[Obj]:
    try:
        answer = orjson.loads(body)
    except orjson.JSONDecodeError as e:
        raise ConversionError(str(e)) from None
    got = f"{answer.get('apiVersion', '')}, Kind={answer.get('kind', '')}"
    if answer.get("kind") != "ConversionReview" or answer.get("apiVersion") != review_api_version:
        raise ConversionError(
            f"expected webhook response of {review_api_version}, Kind=ConversionReview, got {got}"
        )
    response = answer.get("response")
    if not isinstance(response, dict):
        raise ConversionError("no response provided")
    if response.get("uid") != uid:
        raise ConversionError(f'expected response.uid="{uid}", got "{response.get("uid", "")}"')
    result = response.get("result") or {}
    if result.get("status") != "Success":
        if result.get("message"):
            raise ConversionError(str(result["message"]))
        raise ConversionError(
            f"response.result.status was '{result.get('status', '')}', not 'Success'"
        )
    objects = response.get("convertedObjects") or []
    return [o for o in objects if isinstance(o, dict)] if isinstance(objects, list) else []


def _checked(original: Obj, converted: Obj, api_version: str, what: Obj, index: int) -> Obj:
    """kube's checks on one converted object, and its metadata restored."""
    prefix = (
        f"conversion webhook for {_gvk(what)} returned invalid converted object at index {index}"
    )
    if converted.get("apiVersion") != api_version:
        raise errors.unknown(
            f"{prefix}: invalid groupVersion (expected {api_version}, "
            f"received {converted.get('apiVersion', '')})"
        )
    if converted.get("kind") != original.get("kind"):
        raise errors.unknown(
            f"{prefix}: invalid kind (expected {original.get('kind')}, "
            f"received {converted.get('kind', '')})"
        )
    before, after = original.get("metadata") or {}, converted.get("metadata")
    for field, label in (("name", "name"), ("namespace", "namespace"), ("uid", "UID")):
        theirs = after.get(field, "") if isinstance(after, dict) else ""
        if before.get(field, "") != theirs:
            raise errors.unknown(
                f"{prefix}: must have the same {label}: {before.get(field, '')} != {theirs}"
            )
    if not isinstance(after, dict):
        raise errors.unknown(
            f"conversion webhook for {_gvk(what)} returned invalid metadata in object at index "
            f"{index}: missing metadata in converted object"
        )
    meta = dict(before)
    for field in ("labels", "annotations"):
        value = after.get(field)
        if not value:
            meta.pop(field, None)
        elif isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
            meta[field] = value
        else:
            raise errors.unknown(
                f"conversion webhook for {_gvk(what)} returned invalid metadata in object at "
                f"index {index}: invalid metadata.{field} in converted object"
            )
    return {**converted, "metadata": meta}


def webhook_converter_for(
    crd: Obj, resolver: ServiceResolver | None, reactor: Any, review_group: str = REVIEW_GROUP
) -> WebhookConverter | None:
    conversion = crd["spec"].get("conversion") or {}
    if conversion.get("strategy") != "Webhook":
        return None
    if len(crds.versions(crd)) < 2:
        return None  # one version: nothing ever needs converting
    return WebhookConverter(crd, resolver, reactor, review_group)
