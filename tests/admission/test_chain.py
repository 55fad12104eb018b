"""The admission chain calls a plugin only for the kinds it says it acts on."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from platform_api.admission.chain import AdmissionChain
from platform_api.admission.interface import Attributes
from tests.admission.plugin_kit import ADMIN, rt, run

Obj = dict[str, Any]


class Noting:
    """Notes each call; ``resources`` None: every kind."""

    def __init__(self, name: str, calls: list[str], resources: Any = None) -> None:
        self.name, self.calls, self.resources = name, calls, resources

    def admit(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        self.calls.append(f"admit {self.name} {attrs.resource.plural}")

    def validate(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        self.calls.append(f"validate {self.name} {attrs.resource.plural}")


def _scope(plural: str) -> Any:
    ctx = SimpleNamespace(
        user=ADMIN,
        dry_run=False,
        warn=lambda text: None,
        annotate=lambda key, value: None,
        on_failure=lambda action: None,
        on_success=lambda action: None,
    )
    info = SimpleNamespace(subresource="")
    return SimpleNamespace(resource=rt(plural), info=info, namespace="ns", name="x", ctx=ctx)


def test_a_plugin_runs_only_for_the_kinds_it_names_and_in_the_chain_order() -> None:
    calls: list[str] = []
    chain = AdmissionChain(
        [
            Noting("any", calls),
            Noting("pods", calls, frozenset({("", "pods")})),
            Noting("none", calls, frozenset()),
            Noting("any-again", calls),
        ]
    )
    for plural in ("configmaps", "pods", "configmaps"):  # the second configmaps is cached
        scope = _scope(plural)
        mutate = chain.mutator(scope)
        assert mutate is not None
        run(mutate({"metadata": {"name": "x"}}, None))
        run(chain.validator(scope, "CREATE")({"metadata": {"name": "x"}}, None))
    assert calls == [
        "admit any configmaps",
        "admit any-again configmaps",
        "validate any configmaps",
        "validate any-again configmaps",
        "admit any pods",
        "admit pods pods",
        "admit any-again pods",
        "validate any pods",
        "validate pods pods",
        "validate any-again pods",
        "admit any configmaps",
        "admit any-again configmaps",
        "validate any configmaps",
        "validate any-again configmaps",
    ]


class Allocating(Noting):
    """A plugin of kube's store (a Service's addresses): runs after every mutation."""

    allocates = True


def test_allocating_plugins_run_after_the_other_mutations_on_every_path() -> None:
    calls: list[str] = []
    chain = AdmissionChain([Allocating("alloc", calls), Noting("plain", calls)])
    mutate = chain.mutator(_scope("services"))
    assert mutate is not None
    run(mutate({"metadata": {"name": "x"}}, None))
    run(chain.admit(_scope("services"), "DELETE", None))  # deletes and sub-resource creates
    assert calls == [
        "admit plain services",
        "admit alloc services",
        "admit plain services",
        "admit alloc services",
    ]
    alone = AdmissionChain([Allocating("alloc", calls)])
    assert alone.mutator(_scope("services")) is not None


class Extension:
    """A policy or webhook part that notes what it was asked (always active)."""

    def __init__(self, name: str, calls: list[str]) -> None:
        self.name, self.calls = name, calls

    def active(self) -> bool:
        return True

    def has_validating(self) -> bool:
        return True

    def has_mutating(self) -> bool:
        return False

    async def validate(self, req: Any) -> None:
        self.calls.append(f"{self.name} {req.operation} {req.kind[2]} {req.object}")


def test_a_connect_asks_the_policies_and_webhooks_but_not_the_other_plugins() -> None:
    """Of kube's built-in plugins only AlwaysAdmit and AlwaysDeny handle CONNECT (here:
    one that is not kube's is not asked); its policies and webhooks do, with the connect
    options as the object, policies first."""
    calls: list[str] = []
    chain = AdmissionChain(
        [Noting("any", calls)],
        webhooks=Extension("webhooks", calls),  # type: ignore[arg-type]
        policies=Extension("policies", calls),  # type: ignore[arg-type]
    )
    scope = _scope("pods")
    scope.info.subresource = "exec"
    scope.ctx.field_manager = ""
    scope.ctx.trace = None
    options = {"kind": "PodExecOptions", "apiVersion": "v1", "command": ["ls"]}
    run(chain.connect(scope, options))
    shown = str(options)
    assert calls == [
        f"policies CONNECT PodExecOptions {shown}",
        f"webhooks CONNECT PodExecOptions {shown}",
    ]


class Seeing(Noting):
    """Notes the namespace each mutating call sees in the object."""

    def admit(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        self.calls.append(str((obj or {}).get("metadata", {}).get("namespace")))


def test_mutating_plugins_see_the_requests_namespace_in_the_object() -> None:
    """kube's handlers put the request's namespace in the object before admission, on
    every create and update path (a sub-resource's one-shot create too); a cluster-scoped
    object's is cleared."""
    calls: list[str] = []
    chain = AdmissionChain([Seeing("see", calls)])
    mutate = chain.mutator(_scope("configmaps"))
    assert mutate is not None
    run(mutate({"metadata": {"name": "x"}}, None))
    run(chain.admit(_scope("pods"), "CREATE", {"metadata": {"name": "b"}}, "b"))
    run(mutate({"metadata": {"name": "x", "namespace": "ns"}}, {"metadata": {"name": "x"}}))
    cluster = chain.mutator(_scope("namespaces"))
    assert cluster is not None
    run(cluster({"metadata": {"name": "x", "namespace": "ns"}}, None))
    assert calls == ["ns", "ns", "ns", "None"]
