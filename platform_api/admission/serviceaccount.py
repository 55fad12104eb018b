"""ServiceAccount: every pod runs as a service account that exists (kube's plugin).

Creating a pod, the mutating phase names ``default`` when the pod names none, looks the
account up (waiting up to about two seconds for ``default``, which the serviceaccount
controller makes shortly after its namespace), mounts a projected API-access volume into
every init and app container unless the pod or the account opts out, and copies the
account's imagePullSecrets to a pod without any.  The validating phase checks the
account again, and secret references when the account enforces mountable secrets.
Mirror pods are not changed, and may reference neither accounts nor secrets.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from twisted.internet.task import deferLater

from platform_api import errors
from platform_api.admission.interface import Attributes, forbidden
from platform_api.admission.plugins import PluginContext
from platform_api.authentication.serviceaccount import EXTENDED_FROM
from platform_api.authorization.nodegraph import pod_secrets
from platform_api.registry.podannotations import MIRROR_ANNOTATION
from platform_api.registry.prepare import generate_name
from platform_api.registry.store import Store
from platform_api.scheme.namespaces import ROOT_CA_CONFIGMAP, root_ca_configmap

Obj = dict[str, Any]
DEFAULT = "default"
VOLUME_PREFIX = "kube-api-access-"
MOUNT_PATH = "/var/run/secrets/platform.io/serviceaccount"
UPSTREAM_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
ENFORCE_MOUNTABLE_SECRETS = "platform.io/enforce-mountable-secrets"
TOKEN_EXPIRATION_SECONDS = EXTENDED_FROM  # kube's WarnOnlyBoundTokenExpirationSeconds
DEFAULT_ATTEMPTS = 10  # lookups of ``default`` before giving up (kube's)


@dataclass(frozen=True)
class APIAccess:
    """Where the API-access volume is mounted and which CA ConfigMap it projects: kube's
    under --serve-upstream-groups, where stock in-cluster clients look."""

    root_ca: str = ROOT_CA_CONFIGMAP
    mount_path: str = MOUNT_PATH


def api_access(upstream: bool) -> APIAccess:
    return APIAccess(root_ca_configmap(True), UPSTREAM_MOUNT_PATH) if upstream else APIAccess()


def token_volume_source(root_ca: str = ROOT_CA_CONFIGMAP) -> Obj:
    """kube's TokenVolumeSource: token, cluster CA, namespace (the reference, OpenShift's
    build of kube-apiserver, adds its service CA; upstream does not, nor does this)."""

    def config_map(name: str, key: str) -> Obj:
        return {"configMap": {"name": name, "items": [{"key": key, "path": key}]}}

    namespace = {
        "path": "namespace",
        "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
    }
    return {
        "defaultMode": 0o644,
        "sources": [
            {
                "serviceAccountToken": {
                    "expirationSeconds": TOKEN_EXPIRATION_SECONDS,
                    "path": "token",
                }
            },
            config_map(root_ca, "ca.crt"),
            {"downwardAPI": {"items": [namespace]}},
        ],
    }


def should_automount(account: Obj, pod: Obj) -> bool:
    """The pod's choice, else the account's, else yes."""
    for choice in (
        (pod.get("spec") or {}).get("automountServiceAccountToken"),
        account.get("automountServiceAccountToken"),
    ):
        if choice is not None:
            return bool(choice)
    return True


def mount_token(pod: Obj, access: APIAccess = APIAccess()) -> None:
    """Mount the API-access volume at the token path in every container that has nothing
    there, adding the volume (unless the pod has one) when any container mounts it."""
    spec = pod.setdefault("spec", {})
    volumes = spec.get("volumes") or []
    existing = next(
        (v["name"] for v in volumes if str(v.get("name", "")).startswith(VOLUME_PREFIX)), ""
    )
    name = existing or generate_name(VOLUME_PREFIX)
    needed = False
    for key in ("initContainers", "containers"):
        for container in spec.get(key) or []:
            mounts = container.get("volumeMounts") or []
            if any(m.get("mountPath") == access.mount_path for m in mounts):
                continue
            container["volumeMounts"] = [
                *mounts,
                {"name": name, "readOnly": True, "mountPath": access.mount_path},
            ]
            needed = True
    if needed and not existing:
        spec["volumes"] = [
            *volumes,
            {"name": name, "projected": token_volume_source(access.root_ca)},
        ]


def enforces_mountable_secrets(account: Obj) -> bool:
    value = (account.get("metadata", {}).get("annotations") or {}).get(ENFORCE_MOUNTABLE_SECRETS)
    return value in ("1", "t", "T", "true", "TRUE", "True")  # Go's strconv.ParseBool


def _env_secret_refs(container: Obj) -> list[tuple[str, str]]:
    """(how, secret) for each env var and envFrom source naming a secret."""
    out = []
    for env in container.get("env") or []:
        ref = (env.get("valueFrom") or {}).get("secretKeyRef")
        if ref is not None:
            out.append((f"envVar {env.get('name', '')}", str(ref.get("name", ""))))
    for source in container.get("envFrom") or []:
        if source.get("secretRef") is not None:
            out.append(("envFrom", str(source["secretRef"].get("name", ""))))
    return out


def secret_reference_error(account: Obj, pod: Obj, keys: tuple[str, ...]) -> str:
    """kube's limitSecretReferences: a secret the account does not list ("" when none)."""
    spec = pod.get("spec") or {}
    name = account["metadata"]["name"]
    allowed = {s.get("name") for s in account.get("secrets") or []}
    tail = f"is not allowed because service account {name} does not reference that secret"
    if "containers" in keys:
        for volume in spec.get("volumes") or []:
            secret = volume.get("secret")
            if secret is not None and secret.get("secretName", "") not in allowed:
                return f'volume with secret.secretName="{secret.get("secretName", "")}" {tail}'
    for key in keys:
        what = {"initContainers": "init container", "containers": "container"}.get(
            key, "ephemeral container"
        )
        for container in spec.get(key) or []:
            for how, secret in _env_secret_refs(container):
                if secret not in allowed:
                    who = f"{what} {container.get('name', '')} with {how}"
                    return f'{who} referencing secret.secretName="{secret}" {tail}'
    if "containers" in keys:
        pulls = {s.get("name") for s in account.get("imagePullSecrets") or []}
        for i, ref in enumerate(spec.get("imagePullSecrets") or []):
            if ref.get("name") not in pulls:
                return (
                    f'imagePullSecrets[{i}].name="{ref.get("name", "")}" is not allowed because '
                    f"service account {name} does not reference that imagePullSecret"
                )
    return ""


def mirror_pod_error(pod: Obj) -> str:
    """Why a mirror pod may not be created ("" when it may)."""
    spec = pod.get("spec") or {}
    if spec.get("serviceAccountName") or spec.get("serviceAccount"):
        return "a mirror pod may not reference service accounts"
    if pod_secrets(spec):
        return "a mirror pod may not reference secrets"
    for volume in spec.get("volumes") or []:
        for source in (volume.get("projected") or {}).get("sources") or []:
            if source.get("serviceAccountToken") is not None:
                return "a mirror pod may not use ServiceAccountToken volume projections"
    return ""


class ServiceAccount:
    name = "ServiceAccount"
    resources = frozenset({("", "pods")})

    def __init__(
        self,
        accounts: Store,
        reactor: Any,
        attempts: int = DEFAULT_ATTEMPTS,
        access: APIAccess = APIAccess(),
    ) -> None:
        self._accounts = accounts
        self._reactor = reactor
        self._attempts = attempts
        self._access = access

    async def _account(self, attrs: Attributes, pod: Obj, name: str) -> Obj:
        """The account, or kube's 403; ``default`` is waited for a while."""
        attempts = self._attempts if name == DEFAULT else 1
        delay = (100 + random.randrange(100)) / 1000
        for attempt in range(attempts):
            if attempt:
                await deferLater(self._reactor, delay, lambda: None)
            try:
                return self._accounts.get(attrs.namespace, name).object
            except errors.StatusError as e:
                if e.code != 404:
                    raise forbidden(
                        attrs,
                        pod,
                        f"error looking up service account {attrs.namespace}/{name}: {e.message}",
                    ) from None
        why = f'error looking up service account {attrs.namespace}/{name}: serviceaccount "{name}" not found'
        raise forbidden(attrs, pod, why)

    @staticmethod
    def _handles(attrs: Attributes, pod: Obj | None) -> bool:
        rt = attrs.resource
        return (
            pod is not None
            and rt.group == ""
            and rt.plural == "pods"
            and attrs.subresource in ("", "ephemeralcontainers")
        )

    @staticmethod
    def _mirror(pod: Obj) -> bool:
        return MIRROR_ANNOTATION in ((pod.get("metadata") or {}).get("annotations") or {})

    async def admit(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        if not self._handles(attrs, obj) or attrs.operation != "CREATE":
            return
        assert obj is not None
        if self._mirror(obj):
            # Checked here, on the pod as sent: defaulting names an account afterwards.
            why = mirror_pod_error(obj)
            if why:
                raise forbidden(attrs, obj, why)
            return
        spec = obj.setdefault("spec", {})
        # v1's deprecated serviceAccount stands in for an empty serviceAccountName.
        spec["serviceAccountName"] = (
            spec.get("serviceAccountName") or spec.get("serviceAccount") or DEFAULT
        )
        spec["serviceAccount"] = spec["serviceAccountName"]
        account = await self._account(attrs, obj, spec["serviceAccountName"])
        if should_automount(account, obj):
            mount_token(obj, self._access)
        if not spec.get("imagePullSecrets") and account.get("imagePullSecrets"):
            spec["imagePullSecrets"] = [
                {"name": s.get("name", "")} for s in account["imagePullSecrets"]
            ]

    async def validate(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        if not self._handles(attrs, obj):
            return
        assert obj is not None
        ephemeral = attrs.operation == "UPDATE" and attrs.subresource == "ephemeralcontainers"
        if (attrs.operation != "CREATE" and not ephemeral) or (self._mirror(obj) and not ephemeral):
            return
        name = (obj.get("spec") or {}).get("serviceAccountName") or ""
        if not name:
            pod_name = obj.get("metadata", {}).get("name", "")
            raise forbidden(
                attrs, obj, f"no service account specified for pod {attrs.namespace}/{pod_name}"
            )
        account = await self._account(attrs, obj, name)
        if enforces_mountable_secrets(account):
            keys = ("ephemeralContainers",) if ephemeral else ("initContainers", "containers")
            why = secret_reference_error(account, obj, keys)
            if why:
                raise forbidden(attrs, obj, why)


def build(ctx: PluginContext) -> ServiceAccount:
    access = api_access(ctx.config.serve_upstream_groups)
    return ServiceAccount(ctx.stores[("", "v1", "serviceaccounts")], ctx.reactor, access=access)
