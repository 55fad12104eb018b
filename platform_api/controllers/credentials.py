"""Builders of the controllers that issue and clean up credentials: service-account
tokens (and the Secret-based ones' cleaner), bootstrap tokens' signer and cleaner, the
root CA publisher, and the CertificateSigningRequest approver, signer and cleaner.
Registered by name in registry.py; each imports its controller when called, as
registry.py's own builders do."""

# ruff: noqa: PLC0415

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from platform_api.controllers.base import Controller
    from platform_api.controllers.registry import ControllerContext


def serviceaccount_token(ctx: ControllerContext) -> Controller | None:
    from platform_api.authentication.legacytokens import issue
    from platform_api.controllers.serviceaccounttokens import TokensController

    key = ctx.service_account_key
    if key is None:  # kube's runs only with --service-account-private-key-file
        return None
    secrets = ctx.store("", "v1", "secrets")
    accounts = ctx.store("", "v1", "serviceaccounts")

    def sign(account: Any, secret_name: str) -> str:
        return issue(key, account, secret_name)

    return TokensController(
        secrets, accounts, sign, ctx.root_ca, ctx.hub, ctx.reactor, upstream=ctx.upstream_names
    )


def legacy_token_cleaner(ctx: ControllerContext) -> Controller:
    from platform_api.controllers.legacytokencleaner import LegacyTokenCleaner
    from platform_api.controllers.legacytokenoptions import CLEAN_UP_PERIOD
    from platform_api.scheme.namespaces import SYSTEM

    config = ctx.extra.get("config")
    period = getattr(config, "legacy_token_clean_up_period", CLEAN_UP_PERIOD)
    return LegacyTokenCleaner(
        ctx.store("", "v1", "secrets"),
        ctx.store("", "v1", "serviceaccounts"),
        ctx.store("", "v1", "pods"),
        ctx.store("", "v1", "configmaps"),
        SYSTEM,
        period,
        ctx.hub,
        ctx.reactor,
        upstream=ctx.upstream_names,
    )


def bootstrap_signer(ctx: ControllerContext) -> Controller:
    from platform_api.controllers.bootstrap import BootstrapSigner

    configmaps, secrets = ctx.store("", "v1", "configmaps"), ctx.store("", "v1", "secrets")
    return BootstrapSigner(configmaps, secrets, ctx.hub, ctx.reactor, upstream=ctx.upstream_names)


def token_cleaner(ctx: ControllerContext) -> Controller:
    from platform_api.controllers.bootstrap import TokenCleaner

    secrets = ctx.store("", "v1", "secrets")
    return TokenCleaner(secrets, ctx.hub, ctx.reactor, upstream=ctx.upstream_names)


def root_ca_publisher(ctx: ControllerContext) -> Controller | None:
    from platform_api.controllers.rootcacert import RootCAPublisher

    if ctx.root_ca is None:  # kube refuses to start it without a CA bundle
        return None
    namespaces, configmaps = ctx.store("", "v1", "namespaces"), ctx.store("", "v1", "configmaps")
    return RootCAPublisher(
        namespaces,
        configmaps,
        ctx.root_ca.decode(),
        ctx.hub,
        ctx.reactor,
        upstream=ctx.upstream_names,
    )


def csr_signing(ctx: ControllerContext) -> Controller | None:
    from platform_api.controllers.csrsigning import CSRSigner

    if ctx.signing is None or not ctx.signing.files:  # kube skips it without a CA
        return None
    csrs = ctx.store("certificates.platform.io", "v1", "certificatesigningrequests")
    return CSRSigner(csrs, ctx.signing, ctx.hub, ctx.reactor, upstream=ctx.upstream_names)


def csr_cleaner(ctx: ControllerContext) -> Controller:
    from platform_api.controllers.csrcleaner import CSRCleaner

    csrs = ctx.store("certificates.platform.io", "v1", "certificatesigningrequests")
    return CSRCleaner(csrs, ctx.hub, ctx.reactor)


def csr_approving(ctx: ControllerContext) -> Controller | None:
    from platform_api.controllers.csrapproving import CSRApprover

    if ctx.review is None:
        return None
    csrs = ctx.store("certificates.platform.io", "v1", "certificatesigningrequests")
    return CSRApprover(csrs, ctx.review, ctx.hub, ctx.reactor, upstream=ctx.upstream_names)
