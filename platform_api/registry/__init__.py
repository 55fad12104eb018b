"""Registry: the generic store and the per-kind strategies it applies."""

from platform_api.registry import apps, core, events, rbac  # noqa: F401  (registers strategies)
