"""The external JWT signer's client against a real gRPC server on a Unix socket.

The server is grpcio's, in this process, answering as a test tells it to: what a
misbehaving signer can send is what these tests are about (the sample signer process
is exercised end to end in tests/e2e/test_external_signer.py).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import jwt
import pytest
import pytest_twisted
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from twisted.internet import reactor
from twisted.internet.defer import ensureDeferred, gatherResults
from twisted.internet.task import deferLater

from platform_api.apiserver import metrics
from platform_api.authentication import externaljwt_proto as pb
from platform_api.authentication.externalsigner import (
    RETRY_AFTER_FAILURE,
    ExternalSigner,
    SignerError,
)
from platform_api.authentication.serviceaccount import (
    SigningError,
    algorithm,
    key_id,
    signed_claims,
)
from platform_api.grpcunix import unix_target

EC_KEY = ec.generate_private_key(ec.SECP256R1())
OLD_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _der(key: Any) -> bytes:
    return key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )


class Signer:
    """What the test's signer answers; each field may be replaced by a test."""

    def __init__(self) -> None:
        self.keys = [
            pb.Key(key_id="ec", key=_der(EC_KEY)),
            pb.Key(key_id="old", key=_der(OLD_KEY), exclude_from_oidc_discovery=True),
        ]
        self.hint = 60
        self.stamp = 1_700_000_000
        self.fetches = 0
        self.header: Callable[[Any], str] = lambda request: _b64(
            json.dumps({"alg": "ES256", "kid": "ec", "typ": "JWT"}).encode()
        )
        self.signature: Callable[[str, str], str] = lambda header, claims: _b64(
            jwt.get_algorithm_by_name("ES256").sign(f"{header}.{claims}".encode(), EC_KEY)
        )
        self.fail: tuple[Any, str] | None = None

    def sign(self, request: Any, context: Any) -> Any:
        if self.fail:
            context.abort(*self.fail)
        header = self.header(request)
        return pb.SignJWTResponse(header=header, signature=self.signature(header, request.claims))

    def fetch_keys(self, request: Any, context: Any) -> Any:
        self.fetches += 1
        if self.fail:
            context.abort(*self.fail)
        response = pb.FetchKeysResponse(keys=self.keys, refresh_hint_seconds=self.hint)
        if self.stamp is not None:
            response.data_timestamp.seconds = self.stamp
        return response

    def metadata(self, request: Any, context: Any) -> Any:
        return pb.MetadataResponse(max_token_expiration_seconds=7200)


@pytest.fixture
def signer(tmp_path: Path) -> Iterator[tuple[Signer, str]]:
    answers = Signer()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    handlers = {
        name: grpc.unary_unary_rpc_method_handler(
            fn,
            request_deserializer=pb.METHODS[name][0].FromString,
            response_serializer=lambda m: m.SerializeToString(),
        )
        for name, fn in (
            ("Sign", answers.sign),
            ("FetchKeys", answers.fetch_keys),
            ("Metadata", answers.metadata),
        )
    }
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(pb.SERVICE, handlers)])
    socket = str(tmp_path / "signer.sock")
    server.add_insecure_port(unix_target(socket))
    server.start()
    yield answers, socket
    server.stop(0)


@pytest.fixture
def client(signer: tuple[Signer, str]) -> Iterator[ExternalSigner]:
    external = ExternalSigner(signer[1], reactor)
    yield external
    external.stop()


def test_the_first_fetch_reads_keys_lifetime_and_refresh_hint(
    signer: tuple[Signer, str], client: ExternalSigner
) -> None:
    client.initial_fill()
    assert [(k.kid, k.excluded) for k in client.current.keys] == [("ec", False), ("old", True)]
    assert client.current.data_timestamp == 1_700_000_000
    assert [k.kid for k in client.published()] == ["ec"]  # the old key only verifies
    assert 58 <= client.max_age() <= 60
    assert client.max_token_expiration() == 7200


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"hint": 0}, "found invalid refresh hint (0s)"),
        ({"keys": []}, "found no keys"),
        ({"stamp": None}, "invalid data timestamp: proto: invalid nil Timestamp"),
        (
            {"stamp": -62135596801},
            "invalid data timestamp: proto: timestamp (seconds:-62135596801) before 0001-01-01",
        ),
        ({"keys": [pb.Key(key_id="", key=b"x")]}, 'found invalid public key id ""'),
        (
            {"keys": [pb.Key(key_id="k" * 1025, key=b"x")]},
            f'found invalid public key id "{"k" * 1025}"',
        ),
        ({"keys": [pb.Key(key_id="k")]}, "found empty public key"),
        (
            {"keys": [pb.Key(key_id="k", key=b"junk")]},
            "while parsing external public keys: x509: malformed public key",
        ),
    ],
)
def test_a_bad_key_set_is_refused_in_kubes_words(
    signer: tuple[Signer, str], client: ExternalSigner, change: dict[str, Any], error: str
) -> None:
    for name, value in change.items():
        setattr(signer[0], name, value)
    with pytest.raises(SignerError) as e:
        client.initial_fill()
    assert str(e.value) == (
        "while initially filling key cache: while performing initial cache fill: "
        f"while fetching token verification keys: {error}"
    )


def test_a_signer_that_is_not_there_is_waited_for_then_reported(tmp_path: Path) -> None:
    external = ExternalSigner(str(tmp_path / "nobody.sock"), reactor)
    try:
        with pytest.raises(SignerError) as e:
            external.initial_fill(timeout=0.3)
    finally:
        external.stop()
    assert str(e.value) == (
        "while initially filling key cache: while performing initial cache fill: while "
        "fetching token verification keys: while getting externally supported jwt signing "
        "keys: rpc error: code = DeadlineExceeded desc = latest balancer error: connection "
        'error: desc = "transport: Error while dialing: dial unix '
        f'{tmp_path}/nobody.sock: connect: no such file or directory"'
    )


@pytest_twisted.ensureDeferred
async def test_a_signed_token_is_the_signers_header_and_signature_over_our_claims(
    client: ExternalSigner,
) -> None:
    client.initial_fill()
    before = _count("apiserver_externaljwt_sign_request_total", code="OK")
    claims = {"iss": "https://issuer", "sub": "system:serviceaccount:ns:robot", "exp": 2**40}
    token = await client.sign(claims)
    header = jwt.get_unverified_header(token)
    assert header == {"alg": "ES256", "kid": "ec", "typ": "JWT"}
    verified = await signed_claims(token, header, client, {"verify_aud": False})
    assert verified == claims
    assert _count("apiserver_externaljwt_sign_request_total", code="OK") == before + 1


def _header(**fields: Any) -> Callable[[Any], str]:
    return lambda request: _b64(json.dumps(fields).encode())


@pytest.mark.parametrize(
    ("header", "error"),
    [
        (
            lambda r: "a+b",
            "while validating header: while unwrapping header: illegal base64 data at input byte 1",
        ),
        (
            lambda r: "abcde",
            "while validating header: while unwrapping header: illegal base64 data at input byte 4",
        ),
        (
            lambda r: _b64(b"{nope"),
            "while validating header: while parsing header JSON: invalid character 'n' looking for beginning of object key string",
        ),
        (
            _header(alg="ES256", kid="ec", typ="JWT", x5u="u"),
            'while validating header: while parsing header JSON: json: unknown field "x5u"',
        ),
        (
            _header(alg=256, kid="ec", typ="JWT"),
            "while validating header: while parsing header JSON: json: cannot unmarshal number into Go struct field .alg of type string",
        ),
        (_header(alg="ES256", kid="ec", typ="JOSE"), "while validating header: bad type"),
        (_header(alg="ES256", typ="JWT"), "while validating header: key id missing"),
        (
            _header(alg="ES256", kid="k" * 1025, typ="JWT"),
            "while validating header: key id longer than 1 kb",
        ),
        (
            _header(alg="HS256", kid="ec", typ="JWT"),
            'while validating header: bad signing algorithm "HS256"',
        ),
        (
            _header(alg="RS256", kid="old", typ="JWT"),
            "while validating header: key used for signing JWT (kid: old) is excluded from "
            "OIDC discovery docs",
        ),
    ],
)
@pytest_twisted.ensureDeferred
async def test_a_header_kube_would_not_accept_is_an_error(
    signer: tuple[Signer, str], client: ExternalSigner, header: Any, error: str
) -> None:
    client.initial_fill()
    signer[0].header = header
    with pytest.raises(SigningError) as e:
        await client.sign({"sub": "x"})
    assert str(e.value) == error


@pytest_twisted.ensureDeferred
async def test_names_match_without_case_and_an_empty_signature_is_an_error(
    signer: tuple[Signer, str], client: ExternalSigner
) -> None:
    client.initial_fill()
    signer[0].header = _header(ALG="ES256", Kid="ec", typ="JWT")
    signer[0].signature = lambda header, claims: ""
    with pytest.raises(SigningError) as e:
        await client.sign({"sub": "x"})
    assert str(e.value) == "empty signature returned"


@pytest_twisted.ensureDeferred
async def test_a_signer_that_refuses_is_its_grpc_status(
    signer: tuple[Signer, str], client: ExternalSigner
) -> None:
    client.initial_fill()
    before = _count("apiserver_externaljwt_sign_request_total", code="PermissionDenied")
    signer[0].fail = (grpc.StatusCode.PERMISSION_DENIED, "not this account")
    with pytest.raises(SigningError) as e:
        await client.sign({"sub": "x"})
    assert str(e.value) == (
        "while signing jwt: rpc error: code = PermissionDenied desc = not this account"
    )
    after = _count("apiserver_externaljwt_sign_request_total", code="PermissionDenied")
    assert after == before + 1


@pytest_twisted.ensureDeferred
async def test_an_unknown_key_id_fetches_once_for_all_who_ask(
    signer: tuple[Signer, str], client: ExternalSigner
) -> None:
    client.initial_fill()
    answers = signer[0]
    answers.keys = [*answers.keys, pb.Key(key_id="new", key=_der(OLD_KEY))]
    fetched = answers.fetches
    found = await _gather([client.keys_for("new") for _ in range(5)])
    assert [[k.kid for k in keys] for keys in found] == [["new"]] * 5
    assert answers.fetches == fetched + 1
    assert await client.keys_for("gone") == []  # fetched again, still unknown
    assert answers.fetches == fetched + 2
    assert [k.kid for k in await client.keys_for("")] == ["ec", "old", "new"]


@pytest_twisted.ensureDeferred
async def test_the_keys_are_fetched_again_as_the_hint_says_and_kept_when_that_fails(
    signer: tuple[Signer, str], client: ExternalSigner
) -> None:
    answers = signer[0]
    answers.hint = 1
    client.initial_fill()
    client.start()
    answers.keys = [pb.Key(key_id="ec", key=_der(EC_KEY))]
    answers.hint = 60
    await _sleep(1.5)
    assert [k.kid for k in client.current.keys] == ["ec"]
    assert client._timer.getTime() - reactor.seconds() > 55
    answers.fail = (grpc.StatusCode.UNAVAILABLE, "down")
    client._timer.reset(0)
    await _sleep(0.5)
    assert [k.kid for k in client.current.keys] == ["ec"]  # the stale set stays
    left = client._timer.getTime() - reactor.seconds()
    assert RETRY_AFTER_FAILURE - 1 < left <= RETRY_AFTER_FAILURE
    assert _count("apiserver_externaljwt_fetch_keys_request_total", code="Unavailable") >= 1


def test_the_key_ids_are_the_signers_not_ours(client: ExternalSigner) -> None:
    client.initial_fill()
    (ec_key,) = client.published()
    assert ec_key.kid == "ec" != key_id(ec_key.key) and algorithm(ec_key.key) == "ES256"


def _count(name: str, **labels: str) -> float:
    value = metrics.REGISTRY.get_sample_value(name, labels)
    return value or 0.0


async def _gather(coroutines: list[Any]) -> list[Any]:
    return await gatherResults([ensureDeferred(c) for c in coroutines])


async def _sleep(seconds: float) -> None:
    await deferLater(reactor, seconds, lambda: None)
