"""Registry: the generic store and the per-kind strategies it applies."""

from platform_api.registry import apps, core  # noqa: F401  (registers their strategies)
