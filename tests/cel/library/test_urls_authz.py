"""kube's URL and authz libraries."""

from __future__ import annotations

import pytest

from platform_api.cel.library import authz
from tests.cel.conftest import run, runtime_error


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ("url('https://user:pass@example.com:80/path?query=val#fragment').getScheme()", "https"),
        ("url('https://example.com:80/path').getHost()", "example.com:80"),
        ("url('https://example.com:80/path').getHostname()", "example.com"),
        ("url('https://[::1]:80/path').getHostname()", "::1"),
        ("url('https://[::1]:80/path').getHost()", "[::1]:80"),
        ("url('https://example.com:80/path').getPort()", "80"),
        ("url('https://example.com/path').getPort()", ""),
        ("url('https://example.com/path with spaces/').getEscapedPath()", "/path%20with%20spaces/"),
        ("url('https://example.com/a%2Fb').getEscapedPath()", "/a%2Fb"),
        ("url('https://example.com/p?k1=a&k2=b&k2=c').getQuery()", {"k1": ["a"], "k2": ["b", "c"]}),
        ("url('/absolute-path').getScheme()", ""),
        ("isURL('https://user:pass@example.com:80/path?query=val#fragment')", True),
        ("isURL('/absolute-path')", True),
        ("isURL('../relative-path')", False),
        ("isURL('https://example.com:8a/')", False),
        ("url('https://a.io/x') == url('https://a.io/x')", True),
    ],
)
def test_urls(expr: str, value: object) -> None:
    assert run(expr) == value


def test_url_errors() -> None:
    assert runtime_error("url('../relative-path').getScheme() == ''") == (
        'URL parse error during conversion from string: parse "../relative-path": invalid URI '
        "for request"
    )
    assert runtime_error("url('https://a.io:8a/').getScheme() == ''") == (
        'URL parse error during conversion from string: parse "https://a.io:8a/": invalid port '
        '":8a" after host'
    )


def test_authorizer_checks_with_a_bound_callable() -> None:
    seen: list[authz.CheckAttributes] = []

    def decide(attrs: authz.CheckAttributes) -> tuple[str, str]:
        seen.append(attrs)
        if attrs.resource_request and attrs.resource == "secrets":
            return "deny", "no secrets"
        return "allow", "fine"

    user = {"username": "alice", "groups": ["dev"]}
    with authz.bound(decide, user) as authorizer:
        expr = (
            "authorizer.group('apps').resource('deployments').subresource('scale')"
            ".namespace('ns').name('web').check('update').allowed()"
        )
        assert run(expr, authorizer=authorizer) is True
        assert (
            run(
                "authorizer.group('').resource('secrets').check('get').reason()",
                authorizer=authorizer,
            )
            == "no secrets"
        )
        assert run("authorizer.path('/healthz').check('get').allowed()", authorizer=authorizer)
        assert run(
            "authorizer.serviceAccount('ns', 'sa').group('').resource('pods').check('list')"
            ".allowed()",
            authorizer=authorizer,
        )
        assert (
            run(
                "authorizer.group('').resource('pods').fieldSelector('spec.nodeName=n1')"
                ".labelSelector('app=web').check('list').errored()",
                authorizer=authorizer,
            )
            is False
        )
    first = seen[0]
    assert (first.api_group, first.resource, first.subresource, first.namespace, first.name) == (
        "apps",
        "deployments",
        "scale",
        "ns",
        "web",
    )
    assert (first.verb, first.api_version, first.user) == ("update", "*", user)
    assert seen[2].path == "/healthz" and not seen[2].resource_request
    assert seen[3].user == {
        "username": "system:serviceaccount:ns:sa",
        "groups": ["system:serviceaccounts", "system:serviceaccounts:ns"],
    }
    assert (seen[4].field_selector, seen[4].label_selector) == ("spec.nodeName=n1", "app=web")


def test_authorizer_errors() -> None:
    def fail(_attrs: authz.CheckAttributes) -> tuple[str, str]:
        raise RuntimeError("webhook unreachable")

    with authz.bound(fail, {"username": "u"}) as authorizer:
        decision = "authorizer.group('').resource('pods').check('get')"
        assert run(f"{decision}.errored()", authorizer=authorizer) is True
        assert run(f"{decision}.error()", authorizer=authorizer) == "webhook unreachable"
        assert run(f"{decision}.allowed()", authorizer=authorizer) is False
        assert (
            runtime_error("authorizer.path(' ').check('get').allowed()", authorizer=authorizer)
            == "path must not be empty"
        )
        assert (
            runtime_error(
                "authorizer.group('').resource('').check('get').allowed()", authorizer=authorizer
            )
            == "resource must not be empty"
        )
        assert (
            runtime_error(
                "authorizer.serviceAccount('ns', 'Bad_Name').path('/x').check('get').allowed()",
                authorizer=authorizer,
            )
            == "Invalid service account name"
        )
