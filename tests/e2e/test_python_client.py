"""The official ``kubernetes`` Python client, unmodified."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kubernetes import client, config, dynamic
from kubernetes.client.rest import ApiException

from tests.e2e.conftest import Server


@pytest.fixture
def api_client(server: Server) -> Iterator[client.ApiClient]:
    api = config.new_client_from_config(config_file=str(server.kubeconfig))
    yield api
    api.close()


def test_version_and_core_v1(api_client: client.ApiClient) -> None:
    info = client.VersionApi(api_client).get_code()
    assert info.major == "1" and info.git_version.startswith("v1.36")
    core = client.CoreV1Api(api_client)
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py-cm"), data={"k": "v"})
    created = core.create_namespaced_config_map("default", body)
    assert created.metadata.uid
    got = core.read_namespaced_config_map("py-cm", "default")
    assert got.data == {"k": "v"}
    names = [cm.metadata.name for cm in core.list_namespaced_config_map("default").items]
    assert "py-cm" in names
    got.data["k"] = "w"
    assert core.replace_namespaced_config_map("py-cm", "default", got).data == {"k": "w"}
    core.delete_namespaced_config_map("py-cm", "default")
    with pytest.raises(ApiException) as caught:
        core.read_namespaced_config_map("py-cm", "default")
    assert caught.value.status == 404


def test_namespaces_and_secrets(api_client: client.ApiClient) -> None:
    core = client.CoreV1Api(api_client)
    assert "default" in [ns.metadata.name for ns in core.list_namespace().items]
    secret = client.V1Secret(metadata=client.V1ObjectMeta(name="py-secret"), string_data={"a": "b"})
    created = core.create_namespaced_secret("default", secret)
    assert created.data == {"a": "Yg=="} and created.type == "Opaque"


def test_dynamic_client_on_rbac(api_client: client.ApiClient) -> None:
    dyn = dynamic.DynamicClient(api_client)
    roles = dyn.resources.get(api_version="rbac.authorization.platform.io/v1", kind="Role")
    role = {
        "apiVersion": "rbac.authorization.platform.io/v1",
        "kind": "Role",
        "metadata": {"name": "reader", "namespace": "default"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}],
    }
    created = roles.create(body=role, namespace="default")
    assert created.rules[0].verbs == ["get", "list"]
    listed = roles.get(namespace="default")
    assert [r.metadata.name for r in listed.items] == ["reader"]
    roles.delete(name="reader", namespace="default")
    assert roles.get(namespace="default").items == []
