"""CertificateSigningRequests: kube's create, update, /status and /approval rules and
messages (taken from a kube-apiserver v1.36), the requester recorded on create."""

from __future__ import annotations

import base64
import copy
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from platform_api.authentication.user import UserInfo
from platform_api.endpoints.tables import COLUMNS
from platform_api.registry import requester
from platform_api.registry.strategy import strategy_for
from platform_api.scheme.catalog import builtin_scheme

Obj = dict[str, Any]
GROUP = "certificates.platform.io"
RT = builtin_scheme().by_kind(GROUP, "v1", "CertificateSigningRequest")
assert RT is not None
MAIN = strategy_for(RT)
SUBS: Any = MAIN.subresource_strategies()  # type: ignore[attr-defined]


def pem_request(cn: str = "alice", orgs: tuple[str, ...] = ()) -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    names = [x509.NameAttribute(NameOID.COMMON_NAME, cn)]
    names += [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in orgs]
    csr = x509.CertificateSigningRequestBuilder().subject_name(x509.Name(names))
    pem = csr.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)
    return base64.b64encode(pem).decode()


def csr(**spec: Any) -> Obj:
    body = {"request": pem_request(), "signerName": "example.com/foo", "usages": ["client auth"]}
    body.update(spec)
    return {"kind": "CertificateSigningRequest", "metadata": {"name": "c"}, "spec": body}


def errors(obj: Obj) -> list[str]:
    return [str(e) for e in MAIN.validate(obj)]


def stored(obj: Obj) -> Obj:
    obj = copy.deepcopy(obj)
    MAIN.prepare_for_create(obj)
    obj["metadata"].update(resourceVersion="1", uid="u", creationTimestamp="2024-01-01T00:00:00Z")
    return obj


def update(path: str, new: Obj, old: Obj) -> tuple[Obj, list[str]]:
    strategy = SUBS[path] if path else MAIN
    new = copy.deepcopy(new)
    strategy.prepare_for_update(new, old)
    return new, [str(e) for e in strategy.validate_update(new, old)]


def test_create_records_the_requester_and_clears_status() -> None:
    token = requester.REQUESTER.set(UserInfo("bob", "u1", ("g1",), {"k": ("v",)}))
    try:
        obj = stored({**csr(username="eve", groups=["system:masters"]), "status": {"x": 1}})
    finally:
        requester.REQUESTER.reset(token)
    spec = obj["spec"]
    assert (spec["username"], spec["uid"], spec["groups"]) == ("bob", "u1", ["g1"])
    assert spec["extra"] == {"k": ["v"]}
    assert obj["status"] == {}
    assert errors(obj) == []


def test_request_must_be_a_pem_certificate_request() -> None:
    assert errors(csr(request="aGVsbG8=")) == [
        'spec.request: Invalid value: "aGVsbG8=": PEM block type must be CERTIFICATE REQUEST'
    ]
    assert errors({"metadata": {"name": "c"}, "spec": {}}) == [
        "spec.request: Invalid value: null: PEM block type must be CERTIFICATE REQUEST",
        "spec.usages: Required value",
        "spec.signerName: Required value",
    ]


def test_usages_and_expiration() -> None:
    assert errors(csr(usages=["client auth", "bogus", "client auth"], expirationSeconds=10)) == [
        'spec.usages[1]: Unsupported value: "bogus": supported values: "any", "cert sign", '
        '"client auth", "code signing", "content commitment", "crl sign", "data encipherment", '
        '"decipher only", "digital signature", "email protection", "encipher only", '
        '"ipsec end system", "ipsec tunnel", "ipsec user", "key agreement", "key encipherment", '
        '"microsoft sgc", "netscape sgc", "ocsp signing", "s/mime", "server auth", "signing", '
        '"timestamping"',
        'spec.usages[2]: Duplicate value: "client auth"',
        "spec.expirationSeconds: Invalid value: 10: may not specify a duration less than 600 "
        "seconds (10 minutes)",
    ]


def test_signer_names() -> None:
    def signer(name: str) -> list[str]:
        return errors(csr(signerName=name))

    form = "must be a fully qualified domain and path of the form 'example.com/signer-name'"
    assert signer("foo") == [f'spec.signerName: Invalid value: "foo": {form}']
    assert signer("a/b/c") == [f'spec.signerName: Invalid value: "a/b/c": {form}']
    assert signer("foo/bar") == [
        'spec.signerName: Invalid value: "foo": should be a domain with at least two segments '
        "separated by dots"
    ]
    assert signer("Example.com/x")[0].startswith(
        'spec.signerName: Invalid value: "Example.com": validating label "Example": a lowercase '
        "RFC 1123 label must consist of"
    )
    assert signer("platform.io/legacy-unknown") == [
        'spec.signerName: Invalid value: "platform.io/legacy-unknown": the legacy signerName is '
        "not allowed via this API version"
    ]
    assert signer("x" * 260 + ".com/a")[0] == (
        "spec.signerName: Too long: may not be more than 253 bytes"
    )


def test_main_resource_keeps_spec_and_status() -> None:
    old = stored(csr())
    new = copy.deepcopy(old)
    new["spec"]["signerName"] = "example.com/bar"
    new["metadata"]["labels"] = {"a": "b"}
    new["status"] = {"conditions": [{"type": "Approved", "status": "True"}]}
    got, errs = update("", new, old)
    assert errs == []
    assert got["spec"] == old["spec"] and got["status"] == {}
    assert got["metadata"]["labels"] == {"a": "b"}


def approved(old: Obj, kind: str = "Approved", **extra: Any) -> Obj:
    new = copy.deepcopy(old)
    new["status"] = {"conditions": [{"type": kind, "status": "True", "reason": "R", **extra}]}
    return new


def test_approval_sets_conditions_with_times() -> None:
    old = stored(csr())
    got, errs = update("approval", approved(old), old)
    assert errs == []
    (condition,) = got["status"]["conditions"]
    assert condition["lastUpdateTime"] == condition["lastTransitionTime"]
    assert got["spec"] == old["spec"]


def test_status_may_not_approve_and_approval_may_not_set_certificates() -> None:
    old = stored(csr())
    _, errs = update("status", approved(old), old)
    assert errs == [
        'status.conditions: Forbidden: updates may not add a condition of type "Approved"'
    ]
    new = approved(old)
    new["status"]["certificate"] = "aGVsbG8="
    got, errs = update("approval", new, old)
    assert errs == [] and "certificate" not in got["status"]


def test_condition_rules() -> None:
    old, _ = update("approval", approved(stored(csr())), stored(csr()))
    both = copy.deepcopy(old)
    both["status"]["conditions"].append({"type": "Denied", "status": "True"})
    assert update("approval", both, old)[1] == [
        'status.conditions: Invalid value: "Denied": Approved and Denied conditions are '
        "mutually exclusive"
    ]
    removed = copy.deepcopy(old)
    removed["status"]["conditions"] = []
    assert update("approval", removed, old)[1] == [
        'status.conditions: Forbidden: updates may not remove a condition of type "Approved"'
    ]
    false = copy.deepcopy(old)
    false["status"]["conditions"][0]["status"] = "False"
    assert update("approval", false, old)[1] == [
        'status.conditions[0].status: Unsupported value: "False": supported values: "True"'
    ]


def test_status_keeps_stored_approval_and_checks_certificates() -> None:
    old, _ = update("approval", approved(stored(csr())), stored(csr()))
    edited = copy.deepcopy(old)
    edited["status"]["conditions"][0]["reason"] = "Changed"
    got, errs = update("status", edited, old)
    assert errs == [] and got["status"]["conditions"] == old["status"]["conditions"]
    bad = copy.deepcopy(old)
    bad["status"]["certificate"] = "aGVsbG8="
    assert update("status", bad, old)[1] == [
        'status.certificate: Invalid value: "<certificate data>": must contain at least one '
        "CERTIFICATE PEM block"
    ]


def test_signer_name_field_selector_and_columns() -> None:
    obj = stored(csr(expirationSeconds=86400))
    assert MAIN.field_getters()["spec.signerName"](obj) == "example.com/foo"
    printer = COLUMNS[(GROUP, "certificatesigningrequests")]
    names = [c.name for c in printer.columns]
    assert names == ["Name", "Age", "SignerName", "Requestor", "RequestedDuration", "Condition"]
    cells = printer.cells(obj)
    assert cells[0] == "c" and cells[2:] == ["example.com/foo", "", "24h", "Pending"]
    denied = {**obj, "status": {"conditions": [{"type": "Denied"}, {"type": "Failed"}]}}
    assert printer.cells(denied)[-1] == "Denied,Failed"
