"""Endpoint handlers, one module per verb."""

from platform_api.endpoints import printers  # noqa: F401  (registers the kinds' table columns)
