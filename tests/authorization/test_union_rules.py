"""The union's rule listing: every resolver's rules, incomplete when one cannot list."""

from __future__ import annotations

from pathlib import Path

from twisted.internet.task import Clock

from platform_api.authentication.user import UserInfo
from platform_api.authorization.node import NodeAuthorizer
from platform_api.authorization.nodegraph import NodeGraph
from platform_api.authorization.union import AlwaysDeny, AuthorizerUnion, PrivilegedGroups
from platform_api.authorization.webhook import WebhookAuthorizer
from platform_api.client.kubeconfig import Connection
from platform_api.storage.lmdb_store import LMDBStorage, open_environment
from platform_api.storage.watch import WatchHub


def test_webhook_and_node_make_the_answer_incomplete(tmp_path: Path) -> None:
    storage = LMDBStorage(open_environment(str(tmp_path / "db"), 2**24), lambda w: None)
    graph = NodeGraph(storage, WatchHub(storage, Clock()), False)
    webhook = WebhookAuthorizer(Connection("https://hook/"), None, client=object())
    union = AuthorizerUnion([PrivilegedGroups(), AlwaysDeny(), NodeAuthorizer(graph), webhook])
    rules = union.rules_for(UserInfo("carol"), "default")
    assert (rules.resource, rules.non_resource, rules.incomplete) == ([], [], True)
    assert rules.errors == ["webhook authorizer does not support user rule resolution"]
    kubelet = UserInfo("system:node:n1", groups=("system:nodes",))
    assert union.rules_for(kubelet, "default").errors == [
        "node authorizer does not support user rule resolution",
        "webhook authorizer does not support user rule resolution",
    ]
