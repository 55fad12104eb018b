"""``/metrics``: kube-apiserver's metric families, kept by prometheus-client.

One registry per process, as kube's ``legacyregistry``: modules declare their families
at import with ``registry=REGISTRY`` and kube's names, labels and help texts, so the
dashboards written for kube-apiserver read this server unchanged.  ``render`` answers in
Prometheus' text format, or OpenMetrics when the scraper asks for it.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder

REGISTRY = CollectorRegistry(auto_describe=True)


def render(accept: str) -> tuple[bytes, bytes]:
    """The registry's samples and their content type, per the scraper's Accept header."""
    encoder, content_type = choose_encoder(accept)
    return encoder(REGISTRY), content_type.encode()
