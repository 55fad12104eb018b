"""The default objects' bootstrap where another server shares the storage."""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.apiserver.defaultobjects import ensure_service_cidr
from tests.admission.plugin_kit import run


class MadeElsewhere:
    """A ServiceCIDR store whose object another replica wrote, not in this one's cache
    yet: the create is refused as existing, the read finds nothing."""

    def __init__(self) -> None:
        self.updates = 0

    def tracker(self, manager: str) -> None:
        return None

    def get(self, namespace: str, name: str) -> Any:
        raise errors.not_found("servicecidrs", "networking.platform.io", name)

    async def create(self, namespace: str, obj: Any, **kwargs: Any) -> Any:
        raise errors.already_exists(
            "servicecidrs", "networking.platform.io", obj["metadata"]["name"]
        )

    async def update(self, *args: Any, **kwargs: Any) -> Any:
        self.updates += 1


def test_a_service_cidr_another_server_made_is_left_to_it() -> None:
    store = MadeElsewhere()
    assert run(ensure_service_cidr(store, "10.0.0.0/24", "2026-11-29T00:00:00Z")) is True  # type: ignore[arg-type]
    assert store.updates == 0
