"""certificatesigningrequest-signing-controller over real storage, the hub and a test clock."""

from __future__ import annotations

import base64
import datetime
import time
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from platform_api.controllers.certauthority import CAFiles, SigningError, key_usage_der
from platform_api.controllers.csrsigning import CSRSigner
from platform_api.controllers.signingoptions import SigningOptions
from platform_api.scheme import signers
from tests.authorization.rbac_cluster import Cluster

Obj = dict[str, Any]
CSRS = ("certificates.platform.io", "v1", "certificatesigningrequests")
HOUR = datetime.timedelta(hours=1)
BACKDATE = datetime.timedelta(minutes=5)


def make_ca(where: Path, name: str = "test-ca", days: int = 3650) -> tuple[str, str]:
    """A CA certificate and key written under ``where``; returns their paths."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - HOUR)
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), False)
        .sign(key, hashes.SHA256())
    )
    where.mkdir(parents=True, exist_ok=True)
    cert_file, key_file = where / "ca.crt", where / "ca.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return str(cert_file), str(key_file)


def pem_request(cn: str, orgs: tuple[str, ...] = (), dns: tuple[str, ...] = ()) -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    names = [x509.NameAttribute(NameOID.COMMON_NAME, cn)]
    names += [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in orgs]
    builder = x509.CertificateSigningRequestBuilder().subject_name(x509.Name(names))
    if dns:
        alt = x509.SubjectAlternativeName([x509.DNSName(d) for d in dns])
        builder = builder.add_extension(alt, critical=False)
    pem = builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)
    return base64.b64encode(pem).decode()


def csr(name: str, signer: str, usages: list[str], **spec: Any) -> Obj:
    body = {"request": pem_request("alice", ("dev",)), "signerName": signer, "usages": usages}
    body.update(spec)
    return {
        "apiVersion": "certificates.platform.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": name},
        "spec": body,
    }


class Setup:
    def __init__(self, tmp_path: Path, upstream: bool = False, duration: float = 8760 * 3600.0):
        self.cluster = Cluster(str(tmp_path / "db"))
        self.cluster.clock.advance(time.time())
        self.ca = make_ca(tmp_path / "ca")
        options = SigningOptions(dict.fromkeys(signers.BUILT_IN, self.ca), duration, True)
        self.store = self.cluster.stores[CSRS]
        self.signer = CSRSigner(
            self.store, options, self.cluster.hub, self.cluster.clock, upstream=upstream
        )
        self.signer.start()

    def create(self, obj: Obj) -> None:
        self.cluster.run(self.store.create("", obj))
        self.cluster.settle()

    def decide(self, name: str, kind: str = "Approved") -> None:
        def approve(existing: Obj | None) -> Obj:
            assert existing is not None
            condition = {"type": kind, "status": "True", "reason": "Test", "message": "t"}
            existing.setdefault("status", {})["conditions"] = [condition]
            return existing

        self.cluster.run(self.store.update("", name, approve, subresource="approval"))
        self.cluster.settle()

    def get(self, name: str) -> Obj:
        return self.store.get("", name).object  # type: ignore[no-any-return]

    def certificate(self, name: str) -> x509.Certificate:
        data = base64.b64decode(self.get(name)["status"]["certificate"])
        certs = x509.load_pem_x509_certificates(data)
        assert len(certs) == 1
        return certs[0]

    def now(self) -> datetime.datetime:
        return datetime.datetime.fromtimestamp(self.cluster.clock.seconds(), datetime.UTC)

    def ca_cert(self) -> x509.Certificate:
        return x509.load_pem_x509_certificate(Path(self.ca[0]).read_bytes())


def test_an_approved_client_request_is_signed_as_kube_signs_it(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    usages = ["client auth", "digital signature", "key encipherment"]
    s.create(csr("c", signers.KUBE_APISERVER_CLIENT, usages, expirationSeconds=3600))
    assert "certificate" not in (s.get("c").get("status") or {})  # not approved: not signed
    s.decide("c")
    cert, ca = s.certificate("c"), s.ca_cert()
    request = x509.load_pem_x509_csr(base64.b64decode(s.get("c")["spec"]["request"]))
    assert cert.subject == request.subject
    assert cert.issuer == ca.subject
    assert cert.public_key() == request.public_key()
    now = s.now().replace(microsecond=0)
    assert cert.not_valid_before_utc == now - BACKDATE  # one hour, backdated five minutes
    assert cert.not_valid_after_utc == now + HOUR
    ext = cert.extensions
    assert ext.get_extension_for_class(x509.BasicConstraints).critical
    assert ext.get_extension_for_class(x509.BasicConstraints).value.ca is False
    usage = ext.get_extension_for_class(x509.KeyUsage)
    assert usage.critical and usage.value.digital_signature and usage.value.key_encipherment
    assert not usage.value.key_cert_sign
    assert ext.get_extension_for_class(x509.ExtendedKeyUsage).value == x509.ExtendedKeyUsage(
        [ExtendedKeyUsageOID.CLIENT_AUTH]
    )
    ski = ca.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest
    aki = ext.get_extension_for_class(x509.AuthorityKeyIdentifier).value
    assert aki.key_identifier == ski
    cert.verify_directly_issued_by(ca)
    assert s.get("c")["status"]["conditions"][0]["type"] == "Approved"  # kept


@pytest.mark.parametrize(
    "expiration, lifetime",
    [
        (None, datetime.timedelta(hours=8760) - BACKDATE),  # --cluster-signing-duration
        (600, datetime.timedelta(minutes=10)),
        (3600 * 24 * 365 * 5, datetime.timedelta(hours=8760) - BACKDATE),  # capped
        (3600 * 10, datetime.timedelta(hours=10) - BACKDATE),  # 8h and over: backdate off
    ],
)
def test_lifetime(tmp_path: Path, expiration: int | None, lifetime: datetime.timedelta) -> None:
    s = Setup(tmp_path)
    extra = {} if expiration is None else {"expirationSeconds": expiration}
    s.create(csr("c", signers.KUBE_APISERVER_CLIENT, ["client auth"], **extra))
    s.decide("c")
    cert = s.certificate("c")
    assert cert.not_valid_after_utc - s.now().replace(microsecond=0) == lifetime


def test_never_past_the_ca(tmp_path: Path) -> None:
    s = Setup(tmp_path, duration=3650 * 86400 * 3.0)
    s.create(csr("c", signers.KUBE_APISERVER_CLIENT, ["client auth"]))
    s.decide("c")
    assert s.certificate("c").not_valid_after_utc == s.ca_cert().not_valid_after_utc


@pytest.mark.parametrize(
    "signer, usages, request_, message",
    [
        (
            signers.KUBE_APISERVER_CLIENT,
            ["client auth", "server auth"],
            None,
            "invalid usage for client certificate: server auth",
        ),
        (
            signers.KUBE_APISERVER_CLIENT,
            ["digital signature"],
            None,
            "missing required usage for client certificate: client auth",
        ),
        (
            signers.KUBE_APISERVER_CLIENT_KUBELET,
            ["client auth"],
            pem_request("alice", ("dev",)),
            "subject organization is not system:nodes",
        ),
        (
            signers.KUBE_APISERVER_CLIENT_KUBELET,
            ["client auth"],
            pem_request("system:node:n1", ("system:nodes",)),
            "usages did not match [client auth digital signature key encipherment]",
        ),
        (
            signers.KUBE_APISERVER_CLIENT_KUBELET,
            ["client auth", "digital signature"],
            pem_request("system:node:n1", ("system:nodes",), ("n1.example",)),
            "DNS subjectAltNames are not allowed",
        ),
        (
            signers.KUBELET_SERVING,
            ["server auth", "digital signature"],
            pem_request("system:node:n1", ("system:nodes",)),
            "DNS or IP subjectAltName is required",
        ),
        (
            signers.KUBELET_SERVING,
            ["server auth", "digital signature"],
            pem_request("n1", ("system:nodes",), ("n1.example",)),
            "subject common name does not begin with system:node:",
        ),
    ],
)
def test_a_request_the_signer_refuses_is_marked_failed(
    tmp_path: Path, signer: str, usages: list[str], request_: str | None, message: str
) -> None:
    s = Setup(tmp_path)
    extra = {"request": request_} if request_ else {}
    s.create(csr("c", signer, usages, **extra))
    s.decide("c")
    status = s.get("c")["status"]
    assert "certificate" not in status
    failed = status["conditions"][1]
    assert {k: failed[k] for k in ("type", "status", "reason", "message")} == {
        "type": "Failed",
        "status": "True",
        "reason": "SignerValidationFailure",
        "message": message,
    }
    assert failed["lastUpdateTime"] and failed["lastTransitionTime"]
    s.signer.enqueue("c")  # looked at again: a failed request stays unsigned
    s.cluster.settle()
    assert "certificate" not in s.get("c")["status"]


def test_kubelet_requests_that_fit_are_signed(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    client = pem_request("system:node:n1", ("system:nodes",))
    s.create(
        csr(
            "client",
            signers.KUBE_APISERVER_CLIENT_KUBELET,
            ["client auth", "digital signature"],
            request=client,
        )
    )
    serving = pem_request("system:node:n1", ("system:nodes",), ("n1.example",))
    usages = ["server auth", "digital signature", "key encipherment"]
    s.create(csr("serving", signers.KUBELET_SERVING, usages, request=serving))
    s.decide("client")
    s.decide("serving")
    assert s.certificate("client").subject.rfc4514_string() == "O=system:nodes,CN=system:node:n1"
    names = s.certificate("serving").extensions.get_extension_for_class(x509.SubjectAlternativeName)
    assert names.value.get_values_for_type(x509.DNSName) == ["n1.example"]


@pytest.mark.parametrize("kind", ["Denied", None])
def test_denied_pending_and_custom_signers_are_left_alone(tmp_path: Path, kind: str | None) -> None:
    s = Setup(tmp_path)
    s.create(csr("c", signers.KUBE_APISERVER_CLIENT, ["client auth"]))
    s.create(csr("custom", "example.com/signer", ["client auth"]))
    if kind:
        s.decide("c", kind)
    s.decide("custom")
    assert "certificate" not in (s.get("c").get("status") or {})
    assert "certificate" not in s.get("custom")["status"]


@pytest.mark.parametrize("upstream", [True, False])
def test_kubes_signer_names_are_signed_only_with_upstream_names(
    tmp_path: Path, upstream: bool
) -> None:
    s = Setup(tmp_path, upstream=upstream)
    s.create(csr("c", "kubernetes.io/kube-apiserver-client", ["client auth"]))
    s.decide("c")
    assert ("certificate" in s.get("c")["status"]) is upstream


def test_a_rotated_ca_on_disk_signs_the_next_request(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    s.create(csr("before", signers.KUBE_APISERVER_CLIENT, ["client auth"]))
    s.decide("before")
    make_ca(tmp_path / "ca", "rotated-ca")  # the same paths, a new CA
    s.create(csr("after", signers.KUBE_APISERVER_CLIENT, ["client auth"]))
    s.decide("after")
    assert s.certificate("before").issuer.rfc4514_string() == "CN=test-ca"
    assert s.certificate("after").issuer.rfc4514_string() == "CN=rotated-ca"


def test_an_unreadable_ca_signs_nothing_and_retries(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    Path(s.ca[1]).write_text("not a key")
    s.create(csr("c", signers.KUBE_APISERVER_CLIENT, ["client auth"]))
    s.decide("c")
    assert "certificate" not in s.get("c")["status"]
    make_ca(tmp_path / "ca", "mended-ca")
    s.cluster.clock.advance(10)
    s.cluster.settle()
    assert s.certificate("c").issuer.rfc4514_string() == "CN=mended-ca"


KEY_USAGE_NAMES = (
    "digital_signature",
    "content_commitment",
    "key_encipherment",
    "data_encipherment",
    "key_agreement",
    "key_cert_sign",
    "crl_sign",
    "encipher_only",
    "decipher_only",
)


@pytest.mark.parametrize(
    "bits", [0b1, 0b101, 0b1_0001_0000, 0b110_0000, 0b1001_0000, 0b1_1111_1111]
)
def test_key_usage_written_as_the_library_and_go_write_it(bits: int) -> None:
    flags = {name: bool(bits >> i & 1) for i, name in enumerate(KEY_USAGE_NAMES)}
    assert key_usage_der(bits) == x509.KeyUsage(**flags).public_bytes()


def test_encipher_only_without_key_agreement_is_written_too() -> None:
    """Go signs it; cryptography's KeyUsage refuses to build it."""
    assert key_usage_der(1 << 7) == bytes.fromhex("03020001")
    assert key_usage_der(1 << 8) == bytes.fromhex("0303070080")


def test_the_authority_refuses_a_request_whose_signature_fails(tmp_path: Path) -> None:
    """Validation already refuses such a request at create (kube's words); the signer checks
    again, as kube's does, before it signs anything."""
    request = x509.load_pem_x509_csr(base64.b64decode(pem_request("alice")))
    der = bytearray(request.public_bytes(serialization.Encoding.DER))
    der[-5] ^= 0xFF  # inside the signature: the request still parses
    tampered = x509.load_der_x509_csr(bytes(der))
    authority = CAFiles(*make_ca(tmp_path / "ca")).current()
    now = datetime.datetime.now(datetime.UTC)
    with pytest.raises(SigningError) as e:
        authority.sign(tampered, ["client auth"], HOUR, now)
    assert str(e.value) == "unable to verify certificate request signature"
