"""The fixture's server through three Python clients: create, get, list and watch a ConfigMap.

Each watch starts from the list's resourceVersion after the create, so the ADDED event comes
from the server's history and the test needs no second thread.
"""

from __future__ import annotations

import asyncio

import pytest

from platform_api.testing import ApiServer

pytestmark = pytest.mark.e2e


def test_kubernetes_client(platform_apiserver: ApiServer, platform_namespace: str) -> None:
    from kubernetes import client, watch

    with platform_apiserver.kubernetes_client() as api_client:
        assert api_client.configuration.host == platform_apiserver.base_url
        core = client.CoreV1Api(api_client)
        listed = core.list_namespaced_config_map(platform_namespace)
        assert [cm.metadata.name for cm in listed.items] in ([], ["platform-root-ca.crt"])
        body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="one"), data={"k": "v"})
        core.create_namespaced_config_map(platform_namespace, body)
        assert core.read_namespaced_config_map("one", platform_namespace).data == {"k": "v"}
        names = [
            cm.metadata.name for cm in core.list_namespaced_config_map(platform_namespace).items
        ]
        assert "one" in names
        events = watch.Watch().stream(
            core.list_namespaced_config_map,
            platform_namespace,
            resource_version=listed.metadata.resource_version,
            timeout_seconds=10,
        )
        event = next(e for e in events if e["object"].metadata.name == "one")
        assert event["type"] == "ADDED"
        assert event["object"].data == {"k": "v"}


def test_lightkube(platform_apiserver: ApiServer, platform_namespace: str) -> None:
    from lightkube.models.meta_v1 import ObjectMeta
    from lightkube.resources.core_v1 import ConfigMap

    client = platform_apiserver.lightkube_client(namespace=platform_namespace)
    assert client._client.config.cluster.server == platform_apiserver.base_url
    listing = client.list(ConfigMap)
    assert [cm.metadata.name for cm in listing] in ([], ["platform-root-ca.crt"])
    rv = listing.resourceVersion
    client.create(ConfigMap(metadata=ObjectMeta(name="one"), data={"k": "v"}))
    assert client.get(ConfigMap, "one").data == {"k": "v"}
    assert "one" in [cm.metadata.name for cm in client.list(ConfigMap)]
    for kind, cm in client.watch(ConfigMap, resource_version=rv):
        if cm.metadata.name == "one":
            assert (kind, cm.data) == ("ADDED", {"k": "v"})
            break


def test_lightkube_async(platform_apiserver: ApiServer, platform_namespace: str) -> None:
    from lightkube.models.meta_v1 import ObjectMeta
    from lightkube.resources.core_v1 import ConfigMap

    async def scenario() -> None:
        client = platform_apiserver.lightkube_async_client(namespace=platform_namespace)
        await client.create(ConfigMap(metadata=ObjectMeta(name="one"), data={"k": "v"}))
        assert (await client.get(ConfigMap, "one")).data == {"k": "v"}
        await client.close()

    asyncio.run(scenario())


# kr8s warns of any server version newer than those it was released with.
KR8S_VERSION_WARNING = "ignore:Kubernetes version v1.36:UserWarning"


@pytest.mark.filterwarnings(KR8S_VERSION_WARNING)
def test_kr8s(platform_apiserver: ApiServer, platform_namespace: str) -> None:
    """Here the watch starts with no resourceVersion: existing objects come as ADDED."""
    from kr8s.objects import ConfigMap

    api = platform_apiserver.kr8s_api(namespace=platform_namespace)
    assert api.auth.server == platform_apiserver.base_url
    created = ConfigMap({"metadata": {"name": "one"}, "data": {"k": "v"}}, api=api)
    created.create()
    assert ConfigMap.get("one", namespace=platform_namespace, api=api).data == {"k": "v"}
    names = [cm.name for cm in api.get("configmaps", namespace=platform_namespace)]
    assert "one" in names
    for kind, cm in api.watch("configmaps", namespace=platform_namespace):
        if cm.name == "one":
            assert (kind, cm.data) == ("ADDED", {"k": "v"})
            break


@pytest.mark.filterwarnings(KR8S_VERSION_WARNING)
def test_kr8s_async(platform_apiserver: ApiServer, platform_namespace: str) -> None:
    async def scenario() -> None:
        from kr8s.asyncio.objects import ConfigMap

        api = await platform_apiserver.kr8s_async_api(namespace=platform_namespace)
        cm = await ConfigMap({"metadata": {"name": "one"}, "data": {"k": "v"}}, api=api)
        await cm.create()
        got = await ConfigMap.get("one", namespace=platform_namespace, api=api)
        assert got.data == {"k": "v"}

    asyncio.run(scenario())


def test_the_decoy_kubeconfig_is_what_a_default_client_would_use() -> None:
    from lightkube import KubeConfig

    assert KubeConfig.from_env().get().cluster.server == "https://127.0.0.1:9"
