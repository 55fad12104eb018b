"""Added latency of each bearer-token method: median microseconds per authentication.

    python benchmarks/authnbench.py

Runs the server's own authenticators in process (what each request pays on top of
serving): the static token file, a service-account JWT (RS256 signature, claims and
the account lookup), and a webhook answer served from its cache.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from cryptography.hazmat.primitives.asymmetric import rsa
from twisted.internet.defer import ensureDeferred

from platform_api.authentication.serviceaccount import (
    LocalSigner,
    ServiceAccountTokens,
    StaticKeys,
    TokenIssuer,
)
from platform_api.authentication.tokenfile import TokenFileAuthenticator
from platform_api.authentication.union import RequestAuthenticator
from platform_api.authentication.user import UserInfo
from platform_api.authentication.webhook import TokenWebhook
from platform_api.client.kubeconfig import Connection

ISSUER = "https://platform.default.svc.cluster.local"
ACCOUNT = {"metadata": {"name": "robot", "namespace": "default", "uid": "u-1"}}


class _Reply:
    code = 200

    async def content(self) -> bytes:
        return b'{"status":{"authenticated":true,"user":{"username":"jane"}}}'


class _Client:
    async def post(self, *args: Any, **kwargs: Any) -> _Reply:
        return _Reply()


def median_us(chain: RequestAuthenticator, token: str, rounds: int = 5000) -> float:
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        d = ensureDeferred(chain.authenticate_token(token))
        found: list[Any] = []
        d.addCallback(found.append)
        assert found and found[0] is not None  # every method here completes synchronously
        samples.append((time.perf_counter() - start) * 1e6)
    return statistics.median(samples)


def main() -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    accounts = ServiceAccountTokens(
        StaticKeys([key.public_key()]), [ISSUER], [ISSUER], lambda ns, kind, name: ACCOUNT
    )
    issued = ensureDeferred(TokenIssuer(LocalSigner(key), ISSUER).issue(ACCOUNT, [ISSUER], 3600))
    token, _ = issued.result  # type: ignore[attr-defined]  # a local key never waits
    webhook = TokenWebhook(Connection("https://hook/"), None, client=_Client())
    tokens = TokenFileAuthenticator({"static-token": UserInfo("jane")})
    rows = [
        ("token file", RequestAuthenticator([], [tokens], None), "static-token"),
        ("service-account JWT", RequestAuthenticator([], [accounts], None), token),
        (
            "  from the token cache",
            RequestAuthenticator([], [accounts], None, clock=time.time),
            token,
        ),
        ("webhook (cached)", RequestAuthenticator([], [webhook], None), "hooked"),
    ]
    print(f"\n{'method':<22}{'median µs':>10}")
    for name, chain, value in rows:
        print(f"{name:<22}{median_us(chain, value):>10.1f}")


if __name__ == "__main__":
    main()
