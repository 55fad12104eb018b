"""Impersonation: ``Impersonate-*`` headers make a request act as another identity.

Each requested part (user or service account, every group, every extra value, the
uid) needs the caller's ``impersonate`` permission on it, as kube's impersonation
filter checks; the request then runs as the new identity, which joins
``system:authenticated`` (or ``system:unauthenticated`` for the anonymous user).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote

from twisted.web.http_headers import Headers

from platform_api import errors
from platform_api.authentication.user import (
    ANONYMOUS,
    AUTHENTICATED,
    UNAUTHENTICATED,
    UserInfo,
)
from platform_api.authorization.interface import Attributes, Authorizer, Decision
from platform_api.authorization.union import forbidden
from platform_api.validation.field import go_quote

USER, GROUP, UID = "Impersonate-User", "Impersonate-Group", "Impersonate-Uid"
EXTRA_PREFIX = "impersonate-extra-"
AUTHENTICATION_GROUP = "authentication.platform.io"
SA_PREFIX = "system:serviceaccount:"


@dataclass(frozen=True)
class Target:
    """One impersonation request (kube builds an ObjectReference per part)."""

    kind: str  # User, ServiceAccount, Group, UserExtra, UID
    name: str
    namespace: str = ""
    field_path: str = ""  # the extra key

    def attributes(self, caller: UserInfo) -> Attributes:
        resource, group, subresource = {
            "ServiceAccount": ("serviceaccounts", "", ""),
            "User": ("users", "", ""),
            "Group": ("groups", "", ""),
            "UserExtra": ("userextras", AUTHENTICATION_GROUP, self.field_path),
            "UID": ("uids", AUTHENTICATION_GROUP, ""),
        }[self.kind]
        return Attributes(
            user=caller,
            verb="impersonate",
            resource_request=True,
            namespace=self.namespace,
            api_group=group,
            api_version="v1" if group else "",
            resource=resource,
            subresource=subresource,
            name=self.name,
        )


def requested(headers: Headers) -> list[Target]:
    """The impersonation parts of a request; 400 for groups, extra or uid without a user."""
    targets: list[Target] = []
    user = (headers.getRawHeaders(USER) or [""])[0]
    if user:
        namespace, _, name = user[len(SA_PREFIX) :].partition(":")
        if user.startswith(SA_PREFIX) and namespace and name and ":" not in name:
            targets.append(Target("ServiceAccount", name, namespace))
        else:
            targets.append(Target("User", user))
    targets += [Target("Group", group) for group in headers.getRawHeaders(GROUP) or []]
    for raw_name, values in headers.getAllRawHeaders():
        header = raw_name.decode("latin-1").lower()
        if header.startswith(EXTRA_PREFIX):
            key = unquote(header[len(EXTRA_PREFIX) :])
            targets += [Target("UserExtra", v.decode("utf-8", "replace"), "", key) for v in values]
    uid = (headers.getRawHeaders(UID) or [""])[0]
    if uid:
        targets.append(Target("UID", uid))
    if targets and not user:
        raise errors.bad_request(f"requested {_go_user(targets)} without impersonating a user name")
    return targets


def _go_user(targets: list[Target]) -> str:
    """What was asked for as kube prints it: Go's ``%#v`` of a ``*user.DefaultInfo``."""
    uid = next((t.name for t in targets if t.kind == "UID"), "")
    groups = [go_quote(t.name) for t in targets if t.kind == "Group"]
    extra: dict[str, list[str]] = {}
    for t in targets:
        if t.kind == "UserExtra":
            extra.setdefault(t.field_path, []).append(go_quote(t.name))
    shown_groups = "[]string{" + ", ".join(groups) + "}" if groups else "[]string(nil)"
    entries = [f"{go_quote(k)}:[]string{{{', '.join(v)}}}" for k, v in sorted(extra.items())]
    shown_extra = "map[string][]string" + ("{" + ", ".join(entries) + "}" if extra else "(nil)")
    return (
        f'&user.DefaultInfo{{Name:"", UID:{go_quote(uid)}, Groups:{shown_groups}, '
        f"Extra:{shown_extra}}}"
    )


async def impersonate(headers: Headers, caller: UserInfo, authorizer: Authorizer) -> UserInfo:
    """The identity the request acts as: ``caller`` unless it asks to impersonate."""
    targets = requested(headers)
    if not targets:
        return caller
    name, uid = "", ""
    groups: list[str] = []
    extra: dict[str, list[str]] = {}
    groups_given = headers.hasHeader(GROUP)
    for target in targets:
        attrs = target.attributes(caller)
        decision, reason = await authorizer.authorize(attrs)
        if decision is not Decision.ALLOW:
            raise forbidden(attrs, reason)
        if target.kind == "ServiceAccount":
            name = f"{SA_PREFIX}{target.namespace}:{target.name}"
            if not groups_given:
                groups = ["system:serviceaccounts", f"system:serviceaccounts:{target.namespace}"]
        elif target.kind == "User":
            name = target.name
        elif target.kind == "Group":
            groups.append(target.name)
        elif target.kind == "UserExtra":
            extra.setdefault(target.field_path, []).append(target.name)
        else:
            uid = target.name
    implied = UNAUTHENTICATED if name == ANONYMOUS else AUTHENTICATED
    if implied not in groups and (name == ANONYMOUS or UNAUTHENTICATED not in groups):
        groups.append(implied)
    _clear(headers)
    return UserInfo(name, uid, tuple(groups), {k: tuple(v) for k, v in extra.items()})


def _clear(headers: Headers) -> None:
    for header in (USER, GROUP, UID):
        headers.removeHeader(header)
    for raw_name, _ in list(headers.getAllRawHeaders()):
        if raw_name.decode("latin-1").lower().startswith(EXTRA_PREFIX):
            headers.removeHeader(raw_name)
