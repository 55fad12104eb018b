"""Schemathesis over the server's own OpenAPI v3: every path and verb, positive and negative.

A dedicated server takes the damage; path namespaces are pinned to a scratch namespace so
creates reach the registry (and random deletes cannot remove the namespaces the fuzzing
needs).  Invariants on every response: no 5xx; a non-2xx JSON body is a v1 Status whose
``code`` is the HTTP status; a failed write leaves nothing behind; /readyz still answers.
``PLATFORM_FUZZ_EXAMPLES`` (default 1) is the number of examples per operation and mode.
"""

from __future__ import annotations

import http.client
import os
import re
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from tests.e2e.conftest import QUIET_CONTROLLERS, Server, session_for, start_server

# One Warning header per unknown field, as kube sends (it caps their length, not their
# number): Python's client refuses more than 100 headers where Go's reads them.
http.client._MAXHEADERS = 10_000  # type: ignore[attr-defined]
SCRATCH = "fuzz"
EXAMPLES = int(os.environ.get("PLATFORM_FUZZ_EXAMPLES", "1"))
WRITES = ("POST", "PUT", "PATCH", "DELETE")
# Negative cases that cost nothing to generate (schemathesis' own negative bodies of the
# big workload schemas take seconds each: they run in the long run, EXAMPLES > 1).
BAD_BODIES: list[Any] = [
    [],
    "text",
    7,
    {"metadata": "x"},
    {"metadata": {"name": 5, "labels": {"a": 1}}},
    {"apiVersion": 1, "kind": []},
    {"metadata": {"name": "UPPER_case"}, "spec": "x"},
    {"metadata": {"name": "fz", "resourceVersion": "x", "uid": 3}},
    {"metadata": {"name": "fz", "generateName": "", "finalizers": [1]}},
    {
        "metadata": {
            "name": "fz",
            "managedFields": [
                {
                    "manager": "m",
                    "operation": "Update",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"k:1": {}},
                }
            ],
        }
    },
    {"$retainKeys": [["x"]], "metadata": {"name": "fz"}},
    [{"op": "add", "path": "/metadata/x~2", "value": 1}, {"op": "bogus"}],
]
BAD_QUERIES: list[dict[str, str]] = [
    {"limit": "1_0"},
    {"limit": "99999999999999999999"},
    {"resourceVersion": "\u0661"},
    {"resourceVersion": "99999999999999999999999"},
    {"resourceVersion": "18446744073709551615", "watch": "1"},
    {"timeoutSeconds": "-5", "watch": "1"},
    {"labelSelector": "a in (b"},
    {"labelSelector": "a>-1,b notin ()"},
    {"fieldSelector": "x"},
    {"fieldSelector": "metadata.name=a\\q"},
    {"continue": "eyJ2IjoibWV0YS5wbGF0Zm9ybS5pby92MSIsInJ2Ijp0cnVlLCJzdGFydCI6ImEifQ"},
    {"resourceVersionMatch": "Exact"},
    {"dryRun": "Some"},
    {"fieldManager": "\u0001"},
    {"fieldValidation": "Loud"},
    {"gracePeriodSeconds": "x"},
    {"gracePeriodSeconds": "99999999999999999999"},
    {"propagationPolicy": "Sideways"},
    {"pretty": "maybe", "allowWatchBookmarks": "maybe"},
]


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """Every controller runs over what the fuzzing writes (their crashes are findings),
    but node-lifecycle: it marks a node the fuzzing made unready once the grace period
    is up, a write of its own that a failed write's check would take for a leak."""
    running = start_server(
        tmp_path_factory.mktemp("fuzz"), QUIET_CONTROLLERS + ",-node-lifecycle-controller"
    )
    running.create_namespace(SCRATCH)
    yield running
    running.stop()


def merged_openapi(session: requests.Session, url: str) -> dict[str, Any]:
    """Every group-version document of /openapi/v3 as one document (names are global).
    The deprecated ``watch/`` paths are one handler whatever the resource, and each of
    their cases streams for a second: those of the core group stand for the rest."""
    merged: dict[str, Any] = {"paths": {}, "components": {"schemas": {}}}
    for entry in session.get(f"{url}/openapi/v3").json()["paths"].values():
        doc = session.get(url + entry["serverRelativeURL"]).json()
        merged.setdefault("openapi", doc["openapi"])
        merged.setdefault("info", doc["info"])
        merged["paths"].update(
            (path, item)
            for path, item in doc["paths"].items()
            if "/watch/" not in path or path.startswith("/api/v1/")
        )
        merged["components"]["schemas"].update(doc.get("components", {}).get("schemas", {}))
    return merged


class Checker:
    """Sends a case and checks the invariants; collects findings rather than stopping."""

    def __init__(self, server: Server) -> None:
        self.url = server.url
        self.session = session_for(server, cert=server.admin_cert)
        self.cases = 0
        self.findings: list[str] = []

    def run(self, case: Any) -> None:
        self._shape(case)
        before = self._snapshot(case)
        try:
            response = case.call(
                base_url=self.url,
                session=self.session,
                timeout=20,
                verify=self.session.verify,  # the call's own default would win over the session's
                cert=self.session.cert,
            )
        except requests.RequestException as e:
            self._find(case, f"no answer: {type(e).__name__}: {str(e)[:200]}")
            return
        self.cases += 1
        problem = self._check(response) if case.method.upper() != "HEAD" else self._status(response)
        if not problem and before is not None and not 200 <= response.status_code < 300:
            after = self._get(before[0])
            if after != before[1]:
                problem = f"failed write changed {before[0]}: {before[1]} -> {after}"
        if problem:
            self._find(case, f"{response.status_code} {problem}: {response.content[:300]!r}")

    def _shape(self, case: Any) -> None:
        """Pin namespaces to the scratch one; bound watches (they would stream for 30 min)."""
        if case.path_parameters and "namespace" in case.path_parameters:
            case.path_parameters["namespace"] = SCRATCH
        query = dict(case.query or {})
        if "/watch/" in case.operation.path or "watch" in query or "follow" in query:
            if query.get("timeoutSeconds") not in ("-5", "0"):
                query["timeoutSeconds"] = "1"
            query.pop("follow", None)
            case.query = query

    def _status(self, response: Any) -> str:
        """A HEAD's invariant (its answer has no body to check): no server error."""
        return "server error" if response.status_code >= 500 else ""

    def _check(self, response: Any) -> str:
        """Invariants of one schemathesis Response (headers map to lists of values)."""
        if response.status_code >= 500 and not _kube_5xx(response):
            return "server error"
        if 200 <= response.status_code < 300:
            return ""
        if not (response.headers.get("content-type") or [""])[0].startswith("application/json"):
            return ""
        try:
            body = orjson.loads(response.content)
        except orjson.JSONDecodeError:
            return "error body is not JSON"
        if not isinstance(body, dict) or body.get("kind") != "Status":
            return "error body is not a Status"
        if body.get("apiVersion") != "v1" or body.get("code") != response.status_code:
            return "Status apiVersion/code mismatch"
        return ""

    def _object_url(self, case: Any) -> str | None:
        """The object a write touches, when its name is known before the call."""
        path = case.formatted_path
        if case.method.upper() == "POST" and "{name}" not in case.operation.path:
            name = (case.body or {}).get("metadata", {}) if isinstance(case.body, dict) else {}
            name = name.get("name") if isinstance(name, dict) else None
            return f"{path}/{name}" if isinstance(name, str) and name.isalnum() else None
        if "{name}" in case.operation.path:
            depth = case.operation.path.split("/").index("{name}") + 1
            return "/".join(path.split("/")[:depth])
        return None

    def _snapshot(self, case: Any) -> tuple[str, Any] | None:
        if case.method.upper() not in WRITES or case.method.upper() == "DELETE":
            return None
        url = self._object_url(case)
        return (url, self._get(url)) if url else None

    def _get(self, path: str) -> Any:
        response = self.session.get(self.url + path, timeout=20)
        if response.status_code != 200:
            return response.status_code
        return response.json().get("metadata", {}).get("resourceVersion")

    def _find(self, case: Any, problem: str) -> None:
        self.findings.append(f"{case.method} {case.formatted_path} {case.query}: {problem}")

    def ready(self) -> bool:
        return self.session.get(f"{self.url}/readyz", timeout=20).status_code == 200


_BINDING_ERRORS = re.compile(r"\[?target\.(kind|name): ")


def _kube_5xx(response: Any) -> bool:
    """The 5xx kube-apiserver answers too: a get's malformed resourceVersion reaches storage
    unparsed (500), a future one times out waiting (504 ResourceVersionTooLarge), a Binding
    whose target is no node is a plain error of its storage (500 ``target.name: Required
    value``, or several of them in brackets, ``[target.kind: Unsupported value: ...,
    target.name: Required value]``, no reason; recorded from kube-apiserver v1.36)."""
    try:
        message = orjson.loads(response.content).get("message", "")
    except (orjson.JSONDecodeError, AttributeError):
        return False
    if response.status_code == 500:
        return message.startswith("resourceVersion: Invalid value: ") or bool(
            _BINDING_ERRORS.match(message)
        )
    return response.status_code == 504 and "Too large resource version" in message


def crashes(log: Path) -> list[str]:
    """Unhandled errors the server logged (a stream that already sent 200 hides them from
    the client): each ``#critical`` line with the last line of its traceback."""
    found: list[str] = []
    lines = log.read_text(errors="replace").splitlines()
    for i, line in enumerate(lines):
        if "#critical]" in line:
            end = next(
                (j for j in range(i + 1, len(lines)) if not lines[j].startswith("\t")), len(lines)
            )
            block = [t.strip() for t in lines[i + 1 : end] if t.strip()]
            found.append(f"{line[25:200]} -> {block[-1] if block else ''}"[:400])
    return found


def strategies(operation: Any) -> list[st.SearchStrategy[Any]]:
    """Positive cases, cheap hand-made negatives, and schemathesis' negatives in the long run."""
    out = [
        operation.as_strategy(),
        st.sampled_from(BAD_QUERIES).flatmap(lambda q: operation.as_strategy(query=q)),
    ]
    if "requestBody" in operation.definition.raw:
        media = sorted(
            operation.definition.raw["requestBody"].get("content") or ["application/json"]
        )
        out.append(
            st.tuples(st.sampled_from(BAD_BODIES), st.sampled_from(media)).flatmap(
                lambda bm: operation.as_strategy(body=bm[0], media_type=bm[1])
            )
        )
        if EXAMPLES > 1:  # nothing to negate in the string-only parameters of the others
            out.append(operation.as_strategy(generation_mode=GenerationMode.NEGATIVE))
    return out


def fuzz_operation(checker: Checker, strategy: st.SearchStrategy[Any]) -> None:
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def run(case: Any) -> None:
        checker.run(case)

    run()


@pytest.mark.slow
def test_fuzz_openapi(fuzz_server: Server) -> None:
    checker = Checker(fuzz_server)
    raw = merged_openapi(checker.session, fuzz_server.url)
    schema = schemathesis.openapi.from_dict(raw)
    started, operations, skipped = time.monotonic(), 0, []
    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1
        for strategy in strategies(operation):
            try:
                fuzz_operation(checker, strategy)
            except Exception as e:  # a strategy that cannot generate (Unsatisfiable)
                skipped.append(f"{type(e).__name__}: {str(e)[:150]}")
        assert checker.ready(), f"/readyz stopped answering after {operation.label}"
    elapsed = time.monotonic() - started
    print(
        f"fuzz: {operations} operations, {checker.cases} cases, {len(skipped)} skipped, {elapsed:.1f} s"
    )
    print("\n".join(f"{n} x {reason}" for reason, n in Counter(skipped).most_common(8)))
    assert operations > 400
    assert not checker.findings, "\n".join(checker.findings[:40])
    assert fuzz_server.log is not None
    assert not crashes(fuzz_server.log), "\n".join(crashes(fuzz_server.log)[:40])
