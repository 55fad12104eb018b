"""The server's own credentials towards admission webhooks: ``--admission-control-config-file``.

kube's AdmissionConfiguration names, per plugin, a WebhookAdmissionConfiguration whose
``kubeConfigFile`` (an absolute path) holds one ``users`` entry per webhook host.  A call
to ``host:port`` (a Service is ``<name>.<namespace>.svc:<port>``) presents the first of: the
exact name, ``*.`` + each parent domain, the name without a ``:443`` port, ``*``, the
current context's user; else no credentials, as kube's AuthenticationInfoResolver does.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from platform_api.admission.config import load_plugin_settings, read_yaml
from platform_api.apiserver.flagvalues import ConfigError
from platform_api.client.kubeconfig import read_material

WEBHOOK_PLUGINS = ("ValidatingAdmissionWebhook", "MutatingAdmissionWebhook")
Obj = dict[str, Any]


@dataclass(frozen=True)
class ClientCredentials:
    cert_pem: bytes | None = None
    key_pem: bytes | None = None
    token: str = ""


class CredentialResolver:
    def __init__(self, users: dict[str, ClientCredentials], current: ClientCredentials | None):
        self.users = users
        self.current = current

    def for_target(self, target: str) -> ClientCredentials | None:
        """The credentials for ``host:port`` (or ``host``), kube's lookup order."""
        found = self._named(target)
        if found is None:
            host, _, port = target.rpartition(":")
            if port == "443" and host:
                found = self._named(host)
        if found is None:
            found = self.users.get("*")
        return found if found is not None else self.current

    def _named(self, target: str) -> ClientCredentials | None:
        if target in self.users:
            return self.users[target]
        steps = target.split(".")
        for i in range(1, len(steps)):
            wildcard = "*." + ".".join(steps[i:])
            if wildcard in self.users:
                return self.users[wildcard]
        return None


def _credentials(user: Obj, base: str) -> ClientCredentials:
    token = str(user.get("token") or "")
    if not token and user.get("tokenFile"):
        token_path = os.path.join(base, str(user["tokenFile"]))
        with open(token_path) as f:
            token = f.read().strip()
    return ClientCredentials(
        read_material(user, "client-certificate", base),
        read_material(user, "client-key", base),
        token,
    )


def load_kubeconfig_users(path: str) -> CredentialResolver:
    config = read_yaml(path, "kubeconfig")
    base = os.path.dirname(os.path.abspath(path))
    users: dict[str, ClientCredentials] = {}
    try:
        for entry in config.get("users") or ():
            users[str(entry.get("name", ""))] = _credentials(entry.get("user") or {}, base)
    except OSError as e:
        raise ConfigError(f"unable to read the credentials of {path!r}: {e}") from None
    current = None
    name = config.get("current-context")
    for ctx in config.get("contexts") or ():
        if name and ctx.get("name") == name:
            current = users.get(str((ctx.get("context") or {}).get("user", "")))
    return CredentialResolver(users, current)


def load_admission_config(path: str) -> dict[str, CredentialResolver]:
    """The webhook plugins' credentials, by plugin name; ConfigError as kube's start fails."""
    out: dict[str, CredentialResolver] = {}
    for name, settings in load_plugin_settings(path).items():
        if name not in WEBHOOK_PLUGINS:
            continue
        kubeconfig = str(settings.get("kubeConfigFile") or "")
        if not kubeconfig:
            continue
        if not os.path.isabs(kubeconfig):
            raise ConfigError(
                f'kubeConfigFile: Invalid value: "{kubeconfig}": must be an absolute file path'
            )
        out[name] = load_kubeconfig_users(kubeconfig)
    return out
