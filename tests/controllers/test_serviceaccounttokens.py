"""The serviceaccount-token-controller over real storage, the hub and a test clock."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from platform_api import errors
from platform_api.authentication.legacytokens import ACCOUNT_UID, ISSUER, SECRET, issue
from platform_api.controllers.serviceaccounttokens import NAME, TOKEN_TYPE, UID, TokensController
from tests.authorization.rbac_cluster import Cluster

Obj = dict[str, Any]
KEY = ec.generate_private_key(ec.SECP256R1())
CA = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def _b64(text: str | bytes) -> str:
    return base64.b64encode(text if isinstance(text, bytes) else text.encode()).decode()


class World:
    def __init__(self, path: Path) -> None:
        self.cluster = Cluster(str(path))
        self.secrets = self.cluster.stores[("", "v1", "secrets")]
        self.accounts = self.cluster.stores[("", "v1", "serviceaccounts")]
        self.cluster.run(
            self.cluster.stores[("", "v1", "namespaces")].create(
                "", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}}
            )
        )
        self.controller = TokensController(
            self.secrets,
            self.accounts,
            lambda account, name: issue(KEY, account, name),
            CA,
            self.cluster.hub,
            self.cluster.clock,
        )

    def account(self, name: str, secrets: tuple[str, ...] = ()) -> Obj:
        obj: Obj = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}}
        if secrets:
            obj["secrets"] = [{"name": s} for s in secrets]
        created: Obj = self.cluster.run(self.accounts.create("ns", obj)).object
        return created

    def token_secret(self, name: str, account: str, **annotations: str) -> Obj:
        obj = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": name, "annotations": {NAME: account, **annotations}},
            "type": TOKEN_TYPE,
        }
        created: Obj = self.cluster.run(self.secrets.create("ns", obj)).object
        return created

    def secret(self, name: str) -> Obj | None:
        try:
            found: Obj = self.secrets.get("ns", name).object
        except errors.StatusError:
            return None
        return found


@pytest.fixture
def world(tmp_path: Path) -> World:
    w = World(tmp_path)
    w.controller.start()
    return w


def test_a_token_secret_gets_its_accounts_token_the_ca_and_the_namespace(world: World) -> None:
    robot = world.account("robot")
    world.token_secret("robot-token", "robot")
    world.cluster.settle()
    secret = world.secret("robot-token")
    assert secret is not None
    assert secret["metadata"]["annotations"] == {NAME: "robot", UID: robot["metadata"]["uid"]}
    data = secret["data"]
    assert (data["ca.crt"], data["namespace"]) == (_b64(CA), _b64("ns"))
    token = base64.b64decode(data["token"]).decode()
    claims = jwt.decode(token, KEY.public_key(), algorithms=["ES256"])
    assert (claims["iss"], claims["sub"]) == (ISSUER, "system:serviceaccount:ns:robot")
    assert (claims[SECRET], claims[ACCOUNT_UID]) == ("robot-token", robot["metadata"]["uid"])
    assert "exp" not in claims  # a Secret-based token does not expire
    # Filled, it is left alone: a second pass writes nothing.
    rv = secret["metadata"]["resourceVersion"]
    world.controller.enqueue(("secret", "ns", "robot-token"))
    world.cluster.settle()
    assert world.secret("robot-token")["metadata"]["resourceVersion"] == rv  # type: ignore[index]


def test_a_secret_for_no_such_account_or_another_uid_is_deleted(world: World) -> None:
    world.token_secret("orphan", "nobody")
    world.account("robot")
    world.token_secret("stale", "robot", **{UID: "not-robots-uid"})
    world.cluster.settle()
    assert world.secret("orphan") is None and world.secret("stale") is None


def test_an_accounts_tokens_go_with_it_and_a_deleted_token_leaves_its_list(world: World) -> None:
    world.account("robot", secrets=("one", "two"))
    world.token_secret("one", "robot")
    world.token_secret("two", "robot")
    world.cluster.settle()
    world.cluster.run(world.secrets.delete("ns", "one"))
    world.cluster.settle()
    assert world.accounts.get("ns", "robot").object["secrets"] == [{"name": "two"}]
    world.cluster.run(world.accounts.delete("ns", "robot"))
    world.cluster.settle()
    assert world.secret("two") is None
