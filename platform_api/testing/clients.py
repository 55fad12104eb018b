"""Python Kubernetes clients pointed at one kubeconfig file, never at the user's own.

Each library is imported only when its client is asked for: they are optional for users
of the plugin, and importing all of them would slow every pytest start.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import kopf
    import kr8s
    import kr8s.asyncio
    import lightkube
    from kubernetes.client import ApiClient


def kubernetes_client(kubeconfig: Path) -> ApiClient:
    """An ApiClient of the official ``kubernetes`` package for the file's current context."""
    from kubernetes import config  # noqa: PLC0415

    return config.new_client_from_config(config_file=str(kubeconfig))


def lightkube_client(kubeconfig: Path, **kwargs: Any) -> lightkube.Client:
    """A lightkube Client; ``trust_env=False`` so proxy variables cannot divert loopback
    traffic (the configuration is given, so it is never looked up)."""
    from lightkube import Client, KubeConfig  # noqa: PLC0415

    kwargs.setdefault("trust_env", False)
    return Client(config=KubeConfig.from_file(kubeconfig), **kwargs)


def lightkube_async_client(kubeconfig: Path, **kwargs: Any) -> lightkube.AsyncClient:
    from lightkube import AsyncClient, KubeConfig  # noqa: PLC0415

    kwargs.setdefault("trust_env", False)
    return AsyncClient(config=KubeConfig.from_file(kubeconfig), **kwargs)


def kr8s_api(kubeconfig: Path, **kwargs: Any) -> kr8s.Api:
    """kr8s's synchronous Api (kr8s reuses one per thread for the same arguments)."""
    import kr8s  # noqa: PLC0415

    return kr8s.api(kubeconfig=str(kubeconfig), **kwargs)


async def kr8s_async_api(kubeconfig: Path, **kwargs: Any) -> kr8s.asyncio.Api:
    import kr8s.asyncio  # noqa: PLC0415

    return await kr8s.asyncio.api(kubeconfig=str(kubeconfig), **kwargs)


def kopf_registry(
    base_url: str, ca: str, admin_cert: tuple[str, str] | None, token: str
) -> kopf.OperatorRegistry:
    """A fresh kopf registry whose only handler so far logs in to this server.

    Pass it as ``KopfRunner(..., registry=...)``: kopf then imports the operator into it,
    and uses this login instead of its default one, which asks the ``kubernetes`` package
    and so the KUBECONFIG that package saw when first imported, or ~/.kube/config.
    """
    import kopf  # noqa: PLC0415

    registry = kopf.OperatorRegistry()
    cert, key = admin_cert or (None, None)

    @kopf.on.login(registry=registry)
    def login(**_: Any) -> kopf.ConnectionInfo:
        return kopf.ConnectionInfo(
            server=base_url,
            ca_path=ca or None,
            certificate_path=cert,
            private_key_path=key,
            scheme="Bearer" if token else None,
            token=token or None,
        )

    return registry
