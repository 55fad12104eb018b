"""``--service-account-signing-endpoint``: the real server with the sample signer process
(``python -m webhooks.jwtsigner``) signing its tokens and naming its keys."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jwt
import pytest
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from platform_api.authentication.serviceaccount import key_id

from .conftest import Server, session_for, start_server

TWISTD = str(Path(sys.executable).parent / "twistd")
ACCOUNT = "/api/v1/namespaces/default/serviceaccounts"


class Signer:
    """The sample signer process, restartable with other options."""

    def __init__(self, root: Path, socket: str = "") -> None:
        self.root = root
        self.socket = socket or str(root / "signer.sock")
        self.key_file = root / "keys.pem"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, *extra: str) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "webhooks.jwtsigner",
                "--socket",
                self.socket,
                "--key-file",
                str(self.key_file),
                "--generate-key",
                *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert self.process.stdout is not None  # the banner: the socket is listening
        assert self.process.stdout.readline().decode().startswith("JWT signer listening on")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None
        if not self.socket.startswith("@") and os.path.exists(self.socket):
            os.unlink(self.socket)


def wait_for(condition: Callable[[], Any], timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (found := condition()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)
    return found


def pem_key(key: Any) -> bytes:
    return bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )


@pytest.fixture
def signer(tmp_path: Path) -> Iterator[Signer]:
    running = Signer(tmp_path)
    running.start("--refresh-hint=1")
    yield running
    running.stop()


@pytest.fixture
def server(tmp_path: Path, signer: Signer) -> Iterator[Server]:
    running = start_server(tmp_path / "data", f"--service-account-signing-endpoint={signer.socket}")
    yield running
    running.stop()


def token_for(server: Server, name: str, seconds: int = 3600) -> requests.Response:
    admin = session_for(server, cert=server.admin_cert)
    body = {"apiVersion": "authentication.platform.io/v1", "kind": "TokenRequest"}
    body["spec"] = {"expirationSeconds": seconds}  # type: ignore[assignment]
    return admin.post(f"{server.url}{ACCOUNT}/{name}/token", json=body)


def who(server: Server, token: str) -> requests.Response:
    session = session_for(server, token=token)
    review = {"apiVersion": "authentication.platform.io/v1", "kind": "SelfSubjectReview"}
    return session.post(
        f"{server.url}/apis/authentication.platform.io/v1/selfsubjectreviews", json=review
    )


def create_account(server: Server, name: str) -> None:
    admin = session_for(server, cert=server.admin_cert)
    created = admin.post(f"{server.url}{ACCOUNT}", json={"metadata": {"name": name}})
    assert created.status_code == 201, created.text


def kids(server: Server) -> tuple[list[str], str]:
    admin = session_for(server, cert=server.admin_cert)
    response = admin.get(f"{server.url}/openid/v1/jwks")
    assert response.status_code == 200
    return [k["kid"] for k in response.json()["keys"]], response.headers["cache-control"]


def test_the_signer_signs_tokens_that_authenticate(server: Server, signer: Signer) -> None:
    create_account(server, "robot")
    issued = token_for(server, "robot")
    assert issued.status_code == 201, issued.text
    token = issued.json()["status"]["token"]
    header = jwt.get_unverified_header(token)
    signing_key = serialization.load_pem_private_key(signer.key_file.read_bytes(), None)
    assert header == {"alg": "ES256", "kid": key_id(signing_key.public_key()), "typ": "JWT"}
    public: Any = signing_key.public_key()
    claims = jwt.decode(token, public, ["ES256"], options={"verify_aud": False})
    assert claims["sub"] == "system:serviceaccount:default:robot"
    review = who(server, token)
    assert review.status_code == 201
    assert review.json()["status"]["userInfo"]["username"] == "system:serviceaccount:default:robot"
    listed, cache = kids(server)
    assert listed == [header["kid"]]
    assert cache in ("public, max-age=0", "public, max-age=1")  # the signer's hint: 1 s
    admin = session_for(server, cert=server.admin_cert)
    discovery = admin.get(f"{server.url}/.well-known/openid-configuration").json()
    assert discovery["id_token_signing_alg_values_supported"] == ["ES256"]
    text = admin.get(f"{server.url}/metrics").text
    assert 'apiserver_externaljwt_sign_request_total{code="OK"} 1' in text
    assert "apiserver_externaljwt_fetch_keys_data_timestamp " in text
    assert (
        'apiserver_externaljwt_request_duration_seconds_count{code="OK",method="/v1.ExternalJWTSigner/Sign"} 1'
        in text
    )


def test_rotated_keys_sign_new_tokens_and_retired_ones_still_verify(
    server: Server, signer: Signer, tmp_path: Path
) -> None:
    create_account(server, "robot")
    old_token = token_for(server, "robot").json()["status"]["token"]
    old_kid = jwt.get_unverified_header(old_token)["kid"]
    old_pem = signer.key_file.read_bytes()
    new_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    signer.key_file.write_bytes(pem_key(new_key) + old_pem)  # the signer reads it per call
    new_token = token_for(server, "robot").json()["status"]["token"]
    assert jwt.get_unverified_header(new_token) == {
        "alg": "RS256",
        "kid": key_id(new_key.public_key()),
        "typ": "JWT",
    }
    assert [who(server, t).status_code for t in (old_token, new_token)] == [201, 201]
    # The process that signed the new token has its key at once; under --workers the
    # others (as other kube replicas) fetch the keys at the signer's 1 s refresh hint.
    wait_for(lambda: kids(server)[0] == [key_id(new_key.public_key()), old_kid])
    # The old key retired: verifying what it signed, left out of the published keys.
    retired = tmp_path / "retired.pem"
    retired.write_bytes(old_pem)
    signer.key_file.write_bytes(pem_key(new_key))
    signer.stop()
    signer.start("--refresh-hint=1", f"--retired-key-file={retired}")
    wait_for(lambda: kids(server)[0] == [key_id(new_key.public_key())])
    assert [who(server, t).status_code for t in (old_token, new_token)] == [201, 201]


def test_the_signers_longest_lifetime_caps_token_requests(tmp_path: Path) -> None:
    signer = Signer(tmp_path)
    signer.start("--max-token-expiration=3600")
    server = start_server(tmp_path / "data", f"--service-account-signing-endpoint={signer.socket}")
    try:
        create_account(server, "robot")
        issued = token_for(server, "robot", seconds=7200)
        assert issued.status_code == 201
        assert issued.headers["warning"] == (
            '299 - "requested expiration of 7200 seconds shortened to 3600 seconds"'
        )
        assert issued.json()["spec"]["expirationSeconds"] == 3600
        claims = jwt.decode(issued.json()["status"]["token"], options={"verify_signature": False})
        assert claims["exp"] - claims["iat"] == 3600
    finally:
        server.stop()
        signer.stop()


def refused(tmp_path: Path, *flags: str) -> tuple[int, str]:
    result = subprocess.run(
        [
            TWISTD,
            "--pidfile=",
            "-n",
            "platform-apiserver",
            f"--data-dir={tmp_path / 'data'}",
            "--secure-port=0",
            *flags,
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    lines = (result.stdout + result.stderr).strip().splitlines()
    return result.returncode, lines[-1]


def test_a_cap_longer_than_the_signers_ends_the_start(tmp_path: Path) -> None:
    signer = Signer(tmp_path)
    signer.start("--max-token-expiration=3600")
    try:
        code, last = refused(
            tmp_path,
            f"--service-account-signing-endpoint={signer.socket}",
            "--service-account-max-token-expiration=2h",
        )
    finally:
        signer.stop()
    assert code == 1
    assert last.endswith(
        "command failed: service-account-max-token-expiration cannot be set longer than the "
        "token expiration supported by service-account-signing-endpoint: 2h0m0s > 1h0m0s"
    )


@pytest.mark.parametrize(
    ("flags", "error"),
    [
        (
            ("--service-account-signing-key-file={key}",),
            "Error: service-account-signing-key-file and service-account-signing-endpoint are "
            "mutually exclusive and cannot be set at the same time",
        ),
        (
            ("--service-account-key-file={key}",),
            "Error: can't set `--service-account-signing-key-file` and/or "
            "`--service-account-key-file` with `--service-account-signing-endpoint` (They are "
            "mutually exclusive)",
        ),
    ],
)
def test_a_local_key_beside_the_signer_is_refused(
    tmp_path: Path, flags: tuple[str, ...], error: str
) -> None:
    key = tmp_path / "sa.pem"
    key.write_bytes(pem_key(rsa.generate_private_key(public_exponent=65537, key_size=2048)))
    given = [f.format(key=key) for f in flags]
    assert refused(tmp_path, "--service-account-signing-endpoint=/tmp/x.sock", *given) == (
        1,
        error,
    )


def test_an_abstract_socket_name_must_be_one(tmp_path: Path) -> None:
    assert refused(tmp_path, "--service-account-signing-endpoint=@bad/name") == (
        1,
        'Error: invalid value "@bad/name" passed for `--service-account-signing-endpoint`, '
        "when prefixed with @ must be a valid abstract socket name",
    )


def test_a_signer_that_comes_late_or_goes_away_is_waited_for(tmp_path: Path) -> None:
    signer = Signer(tmp_path)
    late = threading.Timer(3.0, signer.start)
    late.start()  # after the server has begun to start
    server = start_server(tmp_path / "data", f"--service-account-signing-endpoint={signer.socket}")
    try:
        create_account(server, "robot")
        signer.stop()
        answered: list[requests.Response] = []
        asking = threading.Thread(target=lambda: answered.append(token_for(server, "robot")))
        asking.start()
        time.sleep(1.0)
        assert answered == []  # waiting for the signer, not failing
        signer.start()
        asking.join(timeout=30)
        assert answered[0].status_code == 201
        assert who(server, answered[0].json()["status"]["token"]).status_code == 201
    finally:
        late.join()
        server.stop()
        signer.stop()


def test_a_token_of_a_key_the_signer_never_named_is_unauthorized(server: Server) -> None:
    forger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    header = {"kid": key_id(forger.public_key())}
    claims = {
        "iss": "https://platform.default.svc.cluster.local",
        "sub": "system:serviceaccount:default:default",
        "aud": ["https://platform.default.svc.cluster.local"],
        "exp": int(time.time()) + 600,
    }
    forged = jwt.encode(claims, forger, "RS256", headers=header)
    response = who(server, forged)
    assert (response.status_code, response.json()["reason"]) == (401, "Unauthorized")


def test_an_abstract_socket_is_named_with_an_at(tmp_path: Path) -> None:
    signer = Signer(tmp_path, f"@platform-e2e.signer-{os.getpid()}-{time.monotonic_ns()}")
    signer.start()
    server = start_server(tmp_path / "data", f"--service-account-signing-endpoint={signer.socket}")
    try:
        create_account(server, "robot")
        issued = token_for(server, "robot")
        assert issued.status_code == 201
        assert who(server, issued.json()["status"]["token"]).status_code == 201
    finally:
        server.stop()
        signer.stop()
