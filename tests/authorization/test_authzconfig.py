"""AuthorizationConfiguration: kube's validation messages, defaults, the chain it builds,
and reloads (accepted, refused, failed) on a fake clock."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.internet.task import Clock

from platform_api.apiserver import authz
from platform_api.apiserver.authzflags import LEGACY_AUTHORIZATION_FLAGS
from platform_api.apiserver.config import ServerConfig, from_flags
from platform_api.apiserver.flagvalues import ConfigError as FlagError
from platform_api.apiserver.metrics import REGISTRY, render
from platform_api.authentication.user import UserInfo
from platform_api.authorization import authzconfig
from platform_api.authorization.authzconfig import ConfigError, load_data
from platform_api.authorization.interface import Attributes, Decision
from platform_api.authorization.union import AlwaysDeny, AuthorizerUnion, PrivilegedGroups
from platform_api.authorization.webhook import WebhookAuthorizer
from platform_api.goduration import format_duration

HEAD = "apiVersion: apiserver.config.platform.io/v1\nkind: AuthorizationConfiguration\n"
SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


@pytest.fixture
def kubeconfig(tmp_path: Path) -> str:
    path = tmp_path / "hook.kubeconfig"
    path.write_text(
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1/'}}]\n"
        "contexts: [{name: c, context: {cluster: c}}]\ncurrent-context: c\n"
    )
    return str(path)


def webhook(kubeconfig: str, name: str = "hook", **fields: str) -> str:
    """One Webhook authorizer in flow style; ``fields`` add to or replace the minimum."""
    body = {
        "timeout": "3s",
        "subjectAccessReviewVersion": "v1",
        "failurePolicy": "Deny",
        "connectionInfo": f"{{type: KubeConfigFile, kubeConfigFile: {kubeconfig}}}",
        **fields,
    }
    inner = ", ".join(f"{k}: {v}" for k, v in body.items() if v != "")
    return f"- {{type: Webhook, name: {name}, webhook: {{{inner}}}}}\n"


def error_of(body: str, required: frozenset[str] = frozenset()) -> str:
    with pytest.raises(ConfigError) as failed:
        load_data((HEAD + body).encode(), required)
    return str(failed.value)


def test_defaults_and_accepted_versions(kubeconfig: str) -> None:
    for version in ("v1", "v1beta1", "v1alpha1"):
        text = HEAD.replace("/v1", f"/{version}") + "authorizers:\n" + webhook(kubeconfig)
        hook = load_data(text.encode()).authorizers[0].webhook
        assert hook is not None
        assert (hook.authorized_ttl, hook.unauthorized_ttl, hook.timeout) == (300.0, 30.0, 3.0)
        assert hook.connection is not None and hook.connection.server == "https://127.0.0.1:1/"

    def go_duration(seconds: float) -> str:  # how the config's seconds are shown
        return format_duration(round(seconds * 1e9))

    assert go_duration(300) == "5m0s" and go_duration(30) == "30s"
    assert go_duration(3661.5) == "1h1m1.5s" and go_duration(0.25) == "250ms"


def test_decoding_is_strict() -> None:
    prefix = "failed to load AuthorizationConfiguration from file: "
    assert error_of("authorizers: [{type: RBAC, name: rbac, wat: 1}]") == (
        prefix + 'strict decoding error: unknown field "authorizers[0].wat"'
    )
    with pytest.raises(ConfigError) as failed:
        load_data(
            b"kind: AuthorizationConfiguration\napiVersion: apiserver.config.platform.io/v2\n"
        )
    assert str(failed.value) == (
        prefix + 'no kind "AuthorizationConfiguration" is registered for version '
        '"apiserver.config.platform.io/v2"'
    )
    assert error_of("authorizers: [{type: Webhook, name: w, webhook: {timeout: soon}}]") == (
        prefix + 'time: invalid duration "soon"'
    )
    with pytest.raises(ConfigError) as failed:
        load_data(b"")  # an empty file is the default configuration: no authorizers
    assert str(failed.value) == (
        "authorizers: Required value: at least one authorization mode must be defined"
    )


def test_authorizer_types_and_names() -> None:
    body = (
        "authorizers:\n- {type: Bogus, name: x}\n- {name: y}\n- {type: RBAC, name: rbac}\n"
        "- {type: RBAC, name: rbac2}\n- {type: Node, name: Node_1}\n"
        "- {type: AlwaysDeny, name: node_1}\n- {type: ABAC, name: Node_1}\n"
        "- {type: Webhook, name: w}\n- {type: AlwaysAllow, name: alwaysallow, webhook: {}}\n"
    )
    assert error_of(body) == (
        '[authorizers[0].type: Unsupported value: "Bogus": supported values: "ABAC", '
        '"AlwaysAllow", "AlwaysDeny", "Node", "RBAC", "Webhook", '
        "authorizers[1].type: Required value, "
        'authorizers[3].type: Duplicate value: "RBAC", '
        f'authorizers[4].name: Invalid value: "Node_1": authorizer name is invalid: {SUBDOMAIN}, '
        f'authorizers[5].name: Invalid value: "node_1": authorizer name is invalid: {SUBDOMAIN}, '
        'authorizers[6].name: Duplicate value: "Node_1", '
        "authorizers[7].webhook: Required value: required when type=Webhook, "
        'authorizers[8].webhook: Invalid value: "non-null": may only be specified when '
        "type=Webhook]"
    )


def test_built_in_types_carry_their_lowercase_name() -> None:
    body = "authorizers: [{type: RBAC, name: roles}, {type: Node, name: nodes}]"
    assert error_of(body) == (
        "[expected name rbac for authorizer RBAC instead of roles, "
        "expected name node for authorizer Node instead of nodes]"
    )


def test_webhook_fields(kubeconfig: str) -> None:
    body = "authorizers:\n" + webhook(
        kubeconfig,
        timeout="45s",
        authorizedTTL="-1s",
        unauthorizedTTL="-90s",
        subjectAccessReviewVersion="v2",
        matchConditionSubjectAccessReviewVersion="v1beta1",
        failurePolicy="Allow",
    )
    assert error_of(body) == (
        '[authorizers[0].timeout: Invalid value: "45s": must be > 0s and <= 30s, '
        'authorizers[0].authorizedTTL: Invalid value: "-1s": must be > 0s, '
        'authorizers[0].unauthorizedTTL: Invalid value: "-1m30s": must be > 0s, '
        'authorizers[0].subjectAccessReviewVersion: Unsupported value: "v2": supported '
        'values: "v1", "v1beta1", '
        "authorizers[0].matchConditionSubjectAccessReviewVersion: Unsupported value: "
        '"v1beta1": supported values: "v1", '
        'authorizers[0].failurePolicy: Unsupported value: "Allow": supported values: '
        '"NoOpinion", "Deny"]'
    )
    required = "authorizers: [{type: Webhook, name: w, webhook: {authorizedTTL: 0s}}]"
    assert error_of(required) == (
        "[authorizers[0].timeout: Required value, "
        "authorizers[0].subjectAccessReviewVersion: Required value, "
        "authorizers[0].failurePolicy: Required value, "
        "authorizers[0].connectionInfo.type: Required value]"
    )


def test_connection_info(kubeconfig: str, tmp_path: Path) -> None:
    def connection_error(info: str) -> str:
        return error_of("authorizers:\n" + webhook(kubeconfig, connectionInfo=info))

    at = "authorizers[0].connectionInfo"
    assert connection_error("{type: KubeConfigFile}") == f"{at}.kubeConfigFile: Required value"
    assert connection_error("{type: KubeConfigFile, kubeConfigFile: etc/k}") == (
        f'{at}.kubeConfigFile: Invalid value: "etc/k": must be an absolute path'
    )
    assert connection_error("{type: KubeConfigFile, kubeConfigFile: /no/such}") == (
        f'{at}.kubeConfigFile: Invalid value: "/no/such": error loading file: stat /no/such: '
        "no such file or directory"
    )
    assert connection_error(f"{{type: KubeConfigFile, kubeConfigFile: {tmp_path}}}") == (
        f'{at}.kubeConfigFile: Invalid value: "{tmp_path}": must be a regular file'
    )
    assert connection_error("{type: InClusterConfig, kubeConfigFile: /x}") == (
        f'{at}.kubeConfigFile: Invalid value: "/x": can only be set when type=KubeConfigFile'
    )
    assert connection_error("{type: Magic}") == (
        f'{at}.type: Unsupported value: apiserver.WebhookConnectionInfo{{Type:"Magic", '
        'KubeConfigFile:(*string)(nil)}: supported values: "InClusterConfig", "KubeConfigFile"'
    )
    broken = tmp_path / "broken.kubeconfig"
    broken.write_text("clusters: [{name: c, cluster: {server: 'http://plain'}}]\n")
    assert connection_error(f"{{type: KubeConfigFile, kubeConfigFile: {broken}}}").startswith(
        f'{at}.kubeConfigFile: Invalid value: "{broken}": error loading kubeconfig: '
    )
    hook = (
        load_data(
            (
                HEAD
                + "authorizers:\n"
                + webhook(kubeconfig, connectionInfo="{type: InClusterConfig}")
            ).encode()
        )
        .authorizers[0]
        .webhook
    )
    assert hook is not None and hook.connection is None


def test_match_conditions_are_compiled_and_type_checked(kubeconfig: str) -> None:
    def conditions(*sources: str, version: str = "v1") -> str:
        listed = ", ".join(f"{{expression: {s!r}}}" for s in sources)
        return "authorizers:\n" + webhook(
            kubeconfig,
            matchConditions=f"[{listed}]",
            matchConditionSubjectAccessReviewVersion=version,
        )

    at = "authorizers[0].matchConditions"
    assert error_of(conditions("request.user == 'a'", version="")) == (
        "authorizers[0].matchConditionSubjectAccessReviewVersion: Required value: required if "
        "match conditions are specified"
    )
    assert error_of(conditions("'yes'", " ", "'yes'", "request.user")) == (
        f"[{at}[0].expression: Invalid value: \"'yes'\": must evaluate to bool but got string, "
        f"{at}[1].expression: Required value, "
        f"{at}[2].expression: Duplicate value: \"'yes'\", "
        f'{at}[3].expression: Invalid value: "request.user": must evaluate to bool but got dyn]'
    )
    message = error_of(conditions("1 + 'a' == 2"))
    assert message.startswith(
        f"{at}[0].expression: Invalid value: \"1 + 'a' == 2\": compilation failed: "
    )
    many = [f"request.user == 'u{i}'" for i in range(65)]
    assert error_of(conditions(*many)) == f"{at}: Too many: 65: must have at most 64 items"
    loaded = load_data((HEAD + conditions("request.user == 'a'", "has(request.uid)")).encode())
    hook = loaded.authorizers[0].webhook
    assert hook is not None and [p.source for p in hook.programs] == [
        "request.user == 'a'",
        "has(request.uid)",
    ]


# -- the chain and its reloads -------------------------------------------------------

ERIN = UserInfo("erin")


def get_pods(user: UserInfo = ERIN) -> Attributes:
    return Attributes(user=user, verb="get", resource_request=True, resource="pods", name="p")


class Marker:
    def __init__(self, decision: Decision, reason: str) -> None:
        self.result = (decision, reason)

    async def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        return self.result


RBAC = Marker(Decision.ALLOW, "rbac")
NODE = Marker(Decision.DENY, "node")


def build(path: Path, rbac: Any = RBAC, node: Any = NODE) -> authz.ReloadingAuthorizer:
    cfg = ServerConfig(authorization_config=str(path))
    built = authz.build(cfg, Clock(), rbac, node)
    assert isinstance(built, authz.ReloadingAuthorizer)
    return built


def test_the_chain_follows_the_file(tmp_path: Path, kubeconfig: str) -> None:
    path = tmp_path / "authz.yaml"
    path.write_text(
        HEAD
        + "authorizers:\n- {type: Node, name: node}\n"
        + webhook(kubeconfig, name="w")
        + "- {type: RBAC, name: rbac}\n- {type: AlwaysDeny, name: alwaysdeny}\n"
    )
    chain = build(path).current
    assert isinstance(chain, AuthorizerUnion)
    parts = chain.authorizers
    assert isinstance(parts[0], PrivilegedGroups) and parts[1] is NODE and parts[3] is RBAC
    assert isinstance(parts[2], WebhookAuthorizer) and isinstance(parts[4], AlwaysDeny)
    assert (parts[2].name, parts[2].timeout, parts[2].on_failure) == ("w", 3.0, Decision.DENY)
    with pytest.raises(authz.AuthorizerUnavailable) as missing:
        build(path, rbac=None)
    assert str(missing.value) == (
        "authorizer type RBAC needs the RBAC authorizer, which is not built"
    )
    path.write_text(
        HEAD + "authorizers:\n" + webhook(kubeconfig, connectionInfo="{type: InClusterConfig}")
    )
    with pytest.raises(authz.AuthorizerUnavailable, match="InClusterConfig is not supported"):
        build(path)


def test_rules_come_from_the_current_chain(tmp_path: Path, kubeconfig: str) -> None:
    path = tmp_path / "authz.yaml"
    path.write_text(HEAD + "authorizers:\n" + webhook(kubeconfig, name="w"))
    rules = build(path).rules_for(ERIN, "default")
    assert (rules.incomplete, rules.errors) == (
        True,
        ["webhook authorizer does not support user rule resolution"],
    )


def reload_counts() -> dict[str, float]:
    name = "apiserver_authorization_config_controller_automatic_reloads_total"
    return {
        sample.labels["status"]: sample.value
        for family in REGISTRY.collect()
        for sample in family.samples
        if sample.name == name
    }


def rewrite(path: Path, text: str, stamp: int) -> None:
    path.write_text(text)
    os.utime(path, (stamp, stamp))


@pytest_twisted.ensureDeferred
async def test_reloads(tmp_path: Path, kubeconfig: str) -> None:
    path = tmp_path / "authz.yaml"
    first = (
        HEAD + "authorizers:\n- {type: RBAC, name: rbac}\n- {type: AlwaysDeny, name: alwaysdeny}\n"
    )
    rewrite(path, first, 1)
    reloader = build(path)
    clock = reloader.reactor
    before = reload_counts()
    loop = reloader.start()
    assert reload_counts().get("success", 0) == before.get("success", 0) + 1
    start = reload_counts()
    assert await reloader.authorize(get_pods()) == (Decision.ALLOW, "rbac")

    # Reordering, and adding a webhook and AlwaysAllow: accepted on the next look.
    reordered = (
        HEAD + "authorizers:\n- {type: AlwaysAllow, name: alwaysallow}\n"
        "- {type: AlwaysDeny, name: alwaysdeny}\n"
        + webhook(kubeconfig, name="w")
        + "- {type: RBAC, name: rbac}\n"
    )
    rewrite(path, reordered, 2)
    clock.advance(1)
    assert await reloader.authorize(get_pods()) == (Decision.ALLOW, "")
    assert reload_counts()["success"] == start["success"] + 1

    # Removing RBAC, or adding Node (not built at start): refused, the chain stays.
    current = reloader.current
    rewrite(path, HEAD + "authorizers: [{type: AlwaysDeny, name: alwaysdeny}]\n", 3)
    clock.advance(1)
    rewrite(path, reordered + "- {type: Node, name: node}\n", 4)
    clock.advance(1)
    # A file that no longer loads, then one that is gone: failures, the chain stays.
    rewrite(path, HEAD + "authorizers: [{type: RBAC}]\n", 5)
    clock.advance(1)
    assert reloader.current is current
    assert reload_counts()["failure"] == start.get("failure", 0) + 3
    path.unlink()
    clock.advance(60)
    assert reload_counts()["failure"] == start.get("failure", 0) + 4
    assert reloader.current is current

    # Back to the last good file: its chain is still the one in force (kube compares
    # with the last configuration applied), so nothing is rebuilt ...
    rewrite(path, reordered, 6)
    clock.advance(1)
    assert reloader.current is current
    assert reload_counts()["success"] == start["success"] + 1
    # ... and the same bytes read again at the minute change nothing.
    clock.advance(60)
    assert reloader.current is current
    assert reload_counts()["success"] == start["success"] + 1
    # A change the file's size and time do not show is read within the minute.
    rewrite(path, reordered.replace("name: w,", "name: x,"), 6)
    clock.advance(1)
    assert reloader.current is current
    clock.advance(59)
    assert reloader.current is not current
    assert reload_counts()["success"] == start["success"] + 2
    loop.stop()
    text = render("")[0].decode()
    assert (
        "apiserver_authorization_config_controller_automatic_reload_last_timestamp_seconds"
        f'{{apiserver_id_hash="{reloader.id_hash}",status="failure"}}'
    ) in text
    assert reloader.id_hash.startswith("sha256:")


def test_refusal_messages(tmp_path: Path, kubeconfig: str) -> None:
    path = tmp_path / "authz.yaml"
    rewrite(path, HEAD + "authorizers: [{type: RBAC, name: rbac}]\n", 1)
    reloader = build(path)
    with pytest.raises(ConfigError, match=r"^missing required types: \[RBAC\]$"):
        authzconfig.load_data(
            (HEAD + webhook(kubeconfig).join(["authorizers:\n", ""])).encode(), reloader.required
        )
    added = HEAD + "authorizers: [{type: RBAC, name: rbac}, {type: Node, name: node}]\n"
    with pytest.raises(authz.AuthorizerUnavailable) as refused:
        authz.chain_for(authzconfig.load_data(added.encode()), reloader.builtins, Clock())
    assert str(refused.value) == (
        "authorizer type Node is not allowed if it was not enabled at initial server startup"
    )


def test_flags(tmp_path: Path, kubeconfig: str) -> None:
    path = tmp_path / "authz.yaml"
    path.write_text(HEAD + "authorizers:\n" + webhook(kubeconfig) + "- {type: RBAC, name: rbac}\n")
    cfg = from_flags({"authorization-config": str(path), "anonymous-auth": "true"})
    assert cfg.authorization_config == str(path)
    assert cfg.authorization_modes == ["Webhook", "RBAC"] and cfg.anonymous_paths is None
    for flag in LEGACY_AUTHORIZATION_FLAGS:
        with pytest.raises(FlagError) as failed:
            from_flags({"authorization-config": str(path), flag: "x"})
        assert str(failed.value) == (
            "--authorization-config can not be specified when --authorization-mode or "
            "--authorization-webhook-* flags are defined"
        )
    with pytest.raises(FlagError, match=r"^open /no/such: no such file or directory$"):
        from_flags({"authorization-config": "/no/such"})
    path.write_text(HEAD + "authorizers: [{type: ABAC, name: abac}]\n")
    with pytest.raises(FlagError, match="ABAC's authorization policy file not passed"):
        from_flags({"authorization-config": str(path)})


def test_the_sample_file_loads(kubeconfig: str) -> None:
    root = Path(__file__).resolve().parents[2]
    text = (root / "etc" / "authorization-config.yaml").read_text()
    sample = "/path/to/platform/etc/authz-webhook.kubeconfig"  # needs scripts/run's PKI
    assert sample in text
    loaded = load_data(text.replace(sample, kubeconfig).encode())
    assert [a.type for a in loaded.authorizers] == ["Node", "Webhook", "RBAC"]
    hook = loaded.authorizers[1].webhook
    assert hook is not None and len(hook.programs) == 2 and hook.connection is not None
