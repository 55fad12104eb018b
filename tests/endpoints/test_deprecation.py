"""Deprecated API versions: kube's warning texts, gauge and audit annotations."""

from __future__ import annotations

from dataclasses import replace

from platform_api.apiserver.metrics import REGISTRY
from platform_api.authentication.user import UserInfo
from platform_api.context import Context
from platform_api.endpoints.deprecation import builtin_warning, observe, warn_custom
from platform_api.scheme.types import ResourceType, Subresource


def test_builtin_warning_texts() -> None:
    assert builtin_warning("", "v1", "ComponentStatus") == (
        "v1 ComponentStatus is deprecated in v1.19+",
        "",
    )
    assert builtin_warning("", "v1", "Endpoints") == (
        "v1 Endpoints is deprecated in v1.33+; use discovery.platform.io/v1 EndpointSlice",
        "",
    )
    assert builtin_warning("flowcontrol.apiserver.platform.io", "v1beta3", "FlowSchema") == (
        "flowcontrol.apiserver.platform.io/v1beta3 FlowSchema is deprecated in v1.29+, "
        "unavailable in v1.32+; use flowcontrol.apiserver.platform.io/v1 FlowSchema",
        "1.32",
    )
    assert builtin_warning("", "v1", "ConfigMap") is None
    assert builtin_warning("apps", "v1", "Deployment") is None


def _gauge(**labels: str) -> float | None:
    return REGISTRY.get_sample_value("apiserver_requested_deprecated_apis", labels)


ENDPOINTS = ResourceType("", "v1", "Endpoints", "endpoints", "endpoints", True)


def test_observe_builtin() -> None:
    ctx = Context(user=UserInfo(name="alice"))
    observe(ctx, ENDPOINTS, "")
    assert ctx.warnings == [
        "v1 Endpoints is deprecated in v1.33+; use discovery.platform.io/v1 EndpointSlice"
    ]
    assert ctx.audit_annotations == {"platform.io/deprecated": "true"}
    labels = {"group": "", "removed_release": "", "resource": "endpoints", "subresource": ""}
    assert _gauge(**labels, version="v1") == 1


def test_removed_release_is_annotated() -> None:
    rt = ResourceType(
        "flowcontrol.apiserver.platform.io",
        "v1beta3",
        "FlowSchema",
        "flowschemas",
        "flowschema",
        False,
        subresources=(Subresource("status", "FlowSchema", ("get",)),),
    )
    ctx = Context(user=UserInfo(name="alice"))
    observe(ctx, rt, "status")
    assert ctx.audit_annotations == {
        "platform.io/deprecated": "true",
        "platform.io/removed-release": "1.32",
    }
    assert (
        _gauge(
            group="flowcontrol.apiserver.platform.io",
            removed_release="1.32",
            resource="flowschemas",
            subresource="status",
            version="v1beta3",
        )
        == 1
    )


def test_not_deprecated_leaves_no_trace() -> None:
    ctx = Context(user=UserInfo(name="alice"))
    observe(ctx, replace(ENDPOINTS, kind="ConfigMap", plural="configmaps"), "")
    assert ctx.warnings == []
    assert ctx.audit_annotations == {}


def test_custom_resource_version() -> None:
    rt = ResourceType(
        "example.com",
        "v1beta1",
        "Widget",
        "widgets",
        "widget",
        True,
        custom=True,
        deprecation_warning="example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget",
    )
    ctx = Context(user=UserInfo(name="alice"))
    warn_custom(ctx, rt)  # before routing: a 404 of a missing sub-resource warns too
    assert (ctx.warnings, ctx.audit_annotations) == ([rt.deprecation_warning], {})
    observe(ctx, rt, "")  # once routed: counted and annotated, not warned twice
    assert ctx.warnings == [rt.deprecation_warning]
    assert ctx.audit_annotations == {"platform.io/deprecated": "true"}
    labels = {
        "group": "example.com",
        "removed_release": "",
        "resource": "widgets",
        "subresource": "",
    }
    assert _gauge(**labels, version="v1beta1") == 1
    ctx = Context(user=UserInfo(name="alice"))
    warn_custom(ctx, replace(rt, deprecation_warning=None))
    observe(ctx, replace(rt, deprecation_warning=None), "")
    assert ctx.warnings == []
