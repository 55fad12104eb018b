"""Label and field selectors: kube's grammar, matching and error texts."""

from __future__ import annotations

import pytest

from platform_api.fieldselectors import check_field_labels, field_getters, parse_field_selector
from platform_api.registry.strategy import strategy_for
from platform_api.scheme.catalog import builtin_scheme
from platform_api.scheme.types import ResourceType
from platform_api.selectors import SelectorError, label_selector_from, parse_label_selector


@pytest.mark.parametrize(
    ("text", "labels", "matches"),
    [
        ("a=b", {"a": "b"}, True),
        ("a==b", {"a": "c"}, False),
        ("a!=b", {}, True),
        ("a in (x,y)", {"a": "y"}, True),
        ("a notin (x,y)", {"a": "y"}, False),
        ("a notin (x)", {}, True),
        ("a", {"a": ""}, True),
        ("!a", {"a": "1"}, False),
        ("a>3,b<5", {"a": "4", "b": "1"}, True),
        ("a=b, c in (d)", {"a": "b", "c": "d"}, True),
        ("", {}, True),
    ],
)
def test_label_selector_matching(text: str, labels: dict[str, str], matches: bool) -> None:
    assert parse_label_selector(text).matches(labels) is matches


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a in", "unable to parse requirement: found '' expected: '('"),
        ("a=b c", "found 'c', expected: ',' or 'end of string'"),
        ("a=b,", "found '', expected: identifier after ','"),
        (",a", "found ',', expected: !, identifier, or 'end of string'"),
        ("a==", None),  # an empty value is allowed
        # "!k" ends at its key, value set or not (reference, 2026-12-06)
        ("!release!=canary", "found '!=', expected: ',' or 'end of string'"),
        ("env in (a),!release!=canary", "found '!=', expected: ',' or 'end of string'"),
        ("!a in (b)", "found 'in', expected: ',' or 'end of string'"),
    ],
)
def test_label_selector_errors(text: str, message: str | None) -> None:
    if message is None:
        assert parse_label_selector(text).requirements[0].values == ("",)
        return
    with pytest.raises(SelectorError) as caught:
        parse_label_selector(text)
    assert str(caught.value) == message


def test_label_selector_validates_keys_and_values() -> None:
    with pytest.raises(SelectorError) as caught:
        parse_label_selector("-x=1")
    assert str(caught.value).startswith(
        'unable to parse requirement: <nil>: Invalid value: "-x": name part must'
    )
    with pytest.raises(SelectorError) as caught:
        parse_label_selector("a=$")
    assert str(caught.value).startswith(
        'unable to parse requirement: values[0][a]: Invalid value: "$"'
    )


def test_field_selectors() -> None:
    selector = parse_field_selector("metadata.name=foo,status.phase!=Failed")
    assert selector.matches({"metadata.name": "foo", "status.phase": "Running"})
    assert not selector.matches({"metadata.name": "foo", "status.phase": "Failed"})
    assert selector.exact("metadata.name") == "foo"
    assert parse_field_selector(r"x=a\,b").terms[0].value == "a,b"
    with pytest.raises(SelectorError) as caught:
        parse_field_selector("nonsense")
    assert str(caught.value) == "invalid selector: 'nonsense'; can't understand 'nonsense'"


def test_field_labels_per_kind() -> None:
    pods = field_getters("", "pods")
    check_field_labels(parse_field_selector("spec.nodeName=n1,status.phase=Running"), pods)
    pod = {"spec": {"nodeName": "n1", "hostNetwork": True}, "status": {"phase": "Running"}}
    assert pods["spec.nodeName"](pod) == "n1" and pods["spec.hostNetwork"](pod) == "true"
    with pytest.raises(SelectorError) as caught:
        check_field_labels(parse_field_selector("spec.nodeName=x"), field_getters("", "configmaps"))
    assert str(caught.value) == "field label not supported: spec.nodeName"
    secrets = field_getters("", "secrets")
    assert secrets["type"]({"type": "Opaque"}) == "Opaque"


@pytest.mark.parametrize(
    ("group", "plural", "selector", "refusal"),
    [
        # as the reference kube-apiserver v1.36 answered each list
        ("", "services", "spec.clusterIP=None,spec.type=ClusterIP", None),
        (
            "apps",
            "replicasets",
            "status.replicas=1",
            '"status.replicas" is not a known field selector: only "metadata.name", '
            '"metadata.namespace"',
        ),
        ("batch", "jobs", "bogus.field=x", 'field label "bogus.field" not supported for Job'),
        (
            "resource.platform.io",
            "resourceslices",
            "bogus.field=x",
            "field label not supported for resource.platform.io/v1, Kind=ResourceSlice: "
            "bogus.field",
        ),
        ("", "pods", "bogus.field=x", "field label not supported: bogus.field"),
        # kinds whose own list names no metadata.namespace, cluster-scoped or not
        # (2026-12-07); the terms are checked sorted, so it is named before "reason"
        *(
            (group, plural, "reason=a,metadata.namespace=a", refusal)
            for group, plural, refusal in (
                ("", "namespaces", "field label not supported: metadata.namespace"),
                ("", "nodes", "field label not supported: metadata.namespace"),
                (
                    "certificates.platform.io",
                    "certificatesigningrequests",
                    "field label not supported: metadata.namespace",
                ),
            )
        ),
        ("", "persistentvolumes", "metadata.namespace=a", None),
    ],
)
def test_each_kind_takes_and_refuses_fields_in_kubes_words(
    group: str, plural: str, selector: str, refusal: str | None
) -> None:
    # resource.platform.io is optional: outside the built-in scheme, its type by hand.
    kind = plural[:-1].capitalize()
    rt = builtin_scheme().lookup(group, "v1", plural) or ResourceType(
        group, "v1", kind, plural, plural[:-1], namespaced=False
    )
    getters = strategy_for(rt).field_getters()
    if refusal is None:
        check_field_labels(parse_field_selector(selector), getters)
        return
    with pytest.raises(SelectorError) as caught:
        check_field_labels(parse_field_selector(selector), getters)
    assert str(caught.value) == refusal


@pytest.mark.parametrize(
    "spec",
    [
        {"matchLabels": {"a": "x" * 64}},  # a value longer than a label's
        {"matchLabels": {"bad key": "b"}},
        {"matchExpressions": [{"key": "a", "operator": "In", "values": []}]},
        {"matchExpressions": [{"key": "a", "operator": "NotIn"}]},
        {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
        {"matchExpressions": [{"key": "", "operator": "Exists"}]},
        {"matchExpressions": [{"key": "a", "operator": "In", "values": ["bad value!"]}]},
    ],
)
def test_a_selector_kubes_conversion_refuses_is_refused(spec: dict) -> None:
    """kube's LabelSelectorAsSelector fails where labels.NewRequirement does; workloads
    then answer 'invalid label selector' instead of matching the template."""
    with pytest.raises(SelectorError):
        label_selector_from(spec)


def test_a_valid_selector_converts() -> None:
    spec = {"matchLabels": {"a": "b"}}
    spec["matchExpressions"] = [{"key": "c", "operator": "Exists"}]
    assert label_selector_from(spec).matches({"a": "b", "c": ""})
