"""Endpoint handlers, one module per verb."""

from platform_api.endpoints import (  # noqa: F401  (register the kinds' table columns)
    printers,
    printers_admission,
    printers_autoscaling,
    printers_cluster,
    printers_optional,
    printers_storage,
)
