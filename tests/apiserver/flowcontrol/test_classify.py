"""Classification: precedence then name, subjects, resource and non-resource rules."""

from __future__ import annotations

from platform_api.apiserver import requestinfo
from platform_api.apiserver.flowcontrol.classify import Classifier, Schema
from platform_api.apiserver.flowcontrol.queueset import flow_hash
from platform_api.authentication.user import UserInfo
from platform_api.registry import flowcontrol_bootstrap as bootstrap

ALL_SCHEMAS = bootstrap.MANDATORY_SCHEMAS + bootstrap.SUGGESTED_SCHEMAS
LEVELS = {o["metadata"]["name"] for o in bootstrap.MANDATORY_LEVELS + bootstrap.SUGGESTED_LEVELS}
USER = UserInfo("alice", groups=("system:authenticated",))


def _classifier(extra: list[Schema] = ()) -> Classifier:  # type: ignore[assignment]
    return Classifier([Schema.from_object(o) for o in ALL_SCHEMAS] + list(extra), LEVELS)


def _classify(
    user: UserInfo, method: str, path: str, c: Classifier | None = None
) -> tuple[str, int]:
    info = requestinfo.parse(method.encode(), path, {})
    match = (c or _classifier()).classify(info, user)
    assert match is not None
    return match.schema.name, match.flow


def _flow(schema: str, distinguisher: str) -> tuple[str, int]:
    """A schema's name and the flow of a distinguisher (user or namespace) in it."""
    return schema, flow_hash(schema, distinguisher)


def test_defaults() -> None:
    masters = UserInfo("admin", groups=("system:masters", "system:authenticated"))
    assert _classify(masters, "GET", "/api/v1/pods") == _flow("exempt", "")
    anonymous = UserInfo("system:anonymous", groups=("system:unauthenticated",))
    assert _classify(anonymous, "GET", "/readyz") == _flow("probes", "")
    assert _classify(anonymous, "GET", "/version") == _flow("global-default", "system:anonymous")
    assert _classify(USER, "GET", "/api/v1/namespaces/x/pods") == _flow("global-default", "alice")
    sa = UserInfo(
        "system:serviceaccount:platform-system:builder",
        groups=("system:serviceaccounts", "system:authenticated"),
    )
    assert _classify(sa, "GET", "/api/v1/namespaces/platform-system/pods") == _flow(
        "platform-system-service-accounts", "platform-system"
    )
    other_sa = UserInfo("system:serviceaccount:team:x", groups=("system:serviceaccounts",))
    assert _classify(other_sa, "GET", "/api/v1/pods")[0] == "service-accounts"
    kcm = UserInfo("system:kube-controller-manager", groups=("system:authenticated",))
    lease = "/apis/coordination.platform.io/v1/namespaces/platform-system/leases/x"
    assert _classify(kcm, "GET", lease)[0] == "system-leader-election"
    assert _classify(kcm, "GET", "/api/v1/namespaces/a/pods")[0] == "kube-controller-manager"
    node = UserInfo("system:node:n1", groups=("system:nodes", "system:authenticated"))
    assert _classify(node, "PUT", "/api/v1/nodes/n1/status")[0] == "system-node-high"
    assert _classify(node, "GET", "/api/v1/pods")[0] == "system-nodes"


def _schema(name: str, precedence: int, rule: dict[str, object]) -> Schema:
    return Schema(name, "uid-" + name, precedence, "global-default", "ByUser", (rule,))


def test_precedence_then_name() -> None:
    rule = {
        "subjects": [{"kind": "User", "user": {"name": "alice"}}],
        "resourceRules": [
            {"verbs": ["list"], "apiGroups": [""], "resources": ["pods"], "namespaces": ["*"]}
        ],
    }
    c = _classifier([_schema("b-mine", 500, rule), _schema("a-mine", 500, rule)])
    assert _classify(USER, "GET", "/api/v1/namespaces/x/pods", c)[0] == "a-mine"
    # A cluster-wide list is not matched by a namespaced rule without clusterScope.
    assert _classify(USER, "GET", "/api/v1/pods", c)[0] == "global-default"
    # Another verb or user falls through.
    assert _classify(USER, "GET", "/api/v1/namespaces/x/pods/p", c)[0] == "global-default"
    bob = UserInfo("bob", groups=("system:authenticated",))
    assert _classify(bob, "GET", "/api/v1/namespaces/x/pods", c)[0] == "global-default"


def test_subresources_and_url_prefixes() -> None:
    rule = {
        "subjects": [{"kind": "Group", "group": {"name": "*"}}],
        "resourceRules": [
            {
                "verbs": ["*"],
                "apiGroups": ["*"],
                "resources": ["pods/log"],
                "namespaces": ["x"],
            }
        ],
        "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/apis/*"]}],
    }
    c = _classifier([_schema("logs", 300, rule)])
    assert _classify(USER, "GET", "/api/v1/namespaces/x/pods/p/log", c)[0] == "logs"
    assert _classify(USER, "GET", "/api/v1/namespaces/y/pods/p/log", c)[0] == "global-default"
    assert _classify(USER, "GET", "/apis", c)[0] == "logs"
    assert _classify(USER, "GET", "/apis/apps", c)[0] == "logs"
    assert _classify(USER, "GET", "/api", c)[0] == "global-default"


def test_dangling_schema_is_skipped() -> None:
    rule = {
        "subjects": [{"kind": "User", "user": {"name": "*"}}],
        "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
    }
    lost = Schema("lost", "u", 10, "no-such-level", "", (rule,))
    assert _classify(USER, "GET", "/version", _classifier([lost]))[0] == "global-default"
