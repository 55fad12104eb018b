"""The authorizer interface: attributes of a request, and an allow/deny/no-opinion decision."""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from platform_api.apiserver.requestinfo import RequestInfo
from platform_api.authentication.user import UserInfo


class Decision(Enum):
    DENY = 0
    ALLOW = 1
    NO_OPINION = 2


@dataclass(frozen=True)
class Attributes:
    """kube's ``authorizer.Attributes``."""

    user: UserInfo
    verb: str
    resource_request: bool
    path: str = ""
    namespace: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    label_selector: str = ""
    field_selector: str = ""

    @classmethod
    def from_request(cls, user: UserInfo, info: RequestInfo) -> Attributes:
        return cls(
            user=user,
            verb=info.verb,
            resource_request=info.is_resource,
            path=info.path,
            namespace=info.namespace,
            api_group=info.api_group,
            api_version=info.api_version,
            resource=info.resource,
            subresource=info.subresource,
            name=info.name,
            label_selector=info.label_selector,
            field_selector=info.field_selector,
        )


class Authorizer(Protocol):
    def authorize(self, attrs: Attributes) -> Awaitable[tuple[Decision, str]]: ...
