"""kube's per-plugin admission latency: every plugin kube would ask is observed, the
ones that act here timed, the others counted as taking no time, until one refuses."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api import errors
from platform_api.admission.chain import AdmissionChain
from platform_api.admission.interface import Attributes
from platform_api.admission.metrics import CONTROLLER_DURATION
from platform_api.admission.plugintimes import HANDLES, handles
from tests.admission.plugin_kit import run
from tests.admission.test_chain import Noting, _scope

Obj = dict[str, Any]
# kube's default plugins, in its order (a few).
ENABLED = (
    "NamespaceLifecycle",
    "LimitRanger",
    "ServiceAccount",
    "DefaultTolerationSeconds",
    "ValidatingAdmissionPolicy",
    "ResourceQuota",
)


class Refusing(Noting):
    def admit(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        super().admit(attrs, obj, old)
        raise errors.forbidden("configmaps", "", "x", "no")


class Last(Noting):
    runs_last = True


def counts() -> dict[tuple[str, ...], float]:
    """What a scrape would show (idle plugins' counts are spread then)."""
    CONTROLLER_DURATION.before_collect()
    return {labels: sum(row[:-1]) for labels, row in CONTROLLER_DURATION.values.items()}


@pytest.fixture(autouse=True)
def fresh() -> None:
    CONTROLLER_DURATION.clear()


def test_each_plugin_kube_asks_is_observed_in_its_step_acting_or_not() -> None:
    calls: list[str] = []
    chain = AdmissionChain(
        [
            Noting("NamespaceLifecycle", calls),
            Noting("LimitRanger", calls, frozenset({("", "pods")})),  # not for configmaps
            Noting("DefaultTolerationSeconds", calls, frozenset({("", "pods")})),
            Last("ResourceQuota", calls),
        ],
        enabled=ENABLED,
    )
    scope = _scope("configmaps")
    mutate = chain.mutator(scope)
    assert mutate is not None
    run(mutate({"metadata": {"name": "x"}}, None))
    run(chain.validator(scope, "CREATE")({"metadata": {"name": "x"}}, None))
    assert calls == [
        "admit NamespaceLifecycle configmaps",
        "admit ResourceQuota configmaps",  # ours admits too; kube's does not: not observed
        "validate NamespaceLifecycle configmaps",  # nor this one
        "validate ResourceQuota configmaps",
    ]
    # ServiceAccount is enabled but not built here: kube would still have asked it.
    assert counts() == {
        ("NamespaceLifecycle", "CREATE", "false", "admit"): 1,
        ("LimitRanger", "CREATE", "false", "admit"): 1,
        ("ServiceAccount", "CREATE", "false", "admit"): 1,
        ("DefaultTolerationSeconds", "CREATE", "false", "admit"): 1,
        ("LimitRanger", "CREATE", "false", "validate"): 1,
        ("ServiceAccount", "CREATE", "false", "validate"): 1,
        ("ValidatingAdmissionPolicy", "CREATE", "false", "validate"): 1,
        ("ResourceQuota", "CREATE", "false", "validate"): 1,
    }
    skipped = CONTROLLER_DURATION.values[("LimitRanger", "CREATE", "false", "admit")]
    assert skipped[0] == 1 and skipped[-1] == 0.0  # below the first bound, no time
    # Counted again by the next request, spread once more when read; a reset forgets both.
    run(mutate({"metadata": {"name": "y"}}, None))
    assert counts()[("LimitRanger", "CREATE", "false", "admit")] == 2
    run(mutate({"metadata": {"name": "z"}}, None))
    CONTROLLER_DURATION.clear()
    assert counts() == {}


def test_a_refusal_is_observed_as_rejected_and_no_plugin_after_it_is() -> None:
    calls: list[str] = []
    chain = AdmissionChain([Refusing("NamespaceLifecycle", calls)], enabled=ENABLED)
    scope = _scope("configmaps")
    mutate = chain.mutator(scope)
    assert mutate is not None
    with pytest.raises(errors.StatusError):
        run(mutate({"metadata": {"name": "x"}}, None))
    assert counts() == {("NamespaceLifecycle", "CREATE", "true", "admit"): 1}


def test_a_delete_and_a_connect_are_observed_for_the_plugins_kube_asks() -> None:
    chain = AdmissionChain([Noting("NamespaceLifecycle", [])], enabled=ENABLED)
    scope = _scope("configmaps")
    run(chain.admit(scope, "DELETE", None))
    run(chain.validator(scope, "DELETE")({}, {"metadata": {"name": "x"}}))
    scope.info.subresource = "exec"
    scope.ctx.field_manager, scope.ctx.trace = "", None
    run(chain.connect(scope, {"kind": "PodExecOptions", "apiVersion": "v1", "command": None}))
    assert counts() == {
        ("NamespaceLifecycle", "DELETE", "false", "admit"): 1,
        ("ValidatingAdmissionPolicy", "DELETE", "false", "validate"): 1,
        ("ValidatingAdmissionPolicy", "CONNECT", "false", "validate"): 1,  # no built-in plugin
    }


@pytest.mark.parametrize("name", sorted(HANDLES))
def test_every_plugin_handles_something_and_the_chain_parts_handle_connect(name: str) -> None:
    steps = [
        (s, op) for s in ("admit", "validate") for op in ("CREATE", "UPDATE", "DELETE", "CONNECT")
    ]
    handled = {(s, op) for s, op in steps if handles(name, s, op)}
    assert handled
    if name.endswith(("AdmissionWebhook", "AdmissionPolicy")) or name in (
        "AlwaysAdmit",
        "AlwaysDeny",
    ):
        assert any(op == "CONNECT" for _, op in handled)
    else:
        assert all(op != "CONNECT" for _, op in handled)
