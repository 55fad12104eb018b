"""The controllers the API server runs in its own process, as ``--controllers`` selects.

kube runs these in kube-controller-manager; users of this server want a cluster that
behaves without one, so the server runs them after it is ready.  The apiextensions and
aggregator controllers and the IPAddress repair loop are part of the API server itself,
as in kube, and always run.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from platform_api.aggregator.availability import APIServiceAvailability
from platform_api.aggregator.proxy import AggregatorProxy
from platform_api.aggregator.registration import APIServiceRegistration
from platform_api.apiextensions.finalizer import CRDFinalizer
from platform_api.apiextensions.naming import NamingController
from platform_api.apiextensions.serving import CRDInstaller
from platform_api.apiserver import pki
from platform_api.apiserver.clusterinfo import root_ca_bundle
from platform_api.apiserver.config import ServerConfig
from platform_api.apiserver.eventttl import EventTTL
from platform_api.apiserver.legacytokentracking import LegacyTokenTracking
from platform_api.authorization.interface import Authorizer, allows
from platform_api.authorization.rbac.index import RuleIndex
from platform_api.controllers import registry
from platform_api.controllers.authtrust import AuthenticationInfo, AuthenticationTrust
from platform_api.controllers.base import Controller
from platform_api.controllers.ipaddressrepair import IPAddressRepair
from platform_api.controllers.resourcequota import pending_for
from platform_api.controllers.signingoptions import SigningOptions
from platform_api.endpoints.accessreviews import subject_attributes
from platform_api.registry.apiregistration import STORE_KEY as APISERVICES
from platform_api.registry.store import Store
from platform_api.scheme import namespaces
from platform_api.storage.watch import WatchHub

Stores = dict[tuple[str, str, str], Store]
Obj = dict[str, Any]
NETWORKING = "networking.platform.io"


def build_controllers(
    config: ServerConfig,
    stores: Stores,
    crd_store: Store,
    crd_installer: CRDInstaller,
    rbac_index: RuleIndex,
    hub: WatchHub,
    reactor: Any,
    aggregator_proxy: AggregatorProxy | None = None,
    authorizer: Authorizer | None = None,
    loopback: Callable[[Store], Any] | None = None,
    service_account_key: Any = None,
) -> list[Controller]:
    """The controllers to start, not yet started; ``loopback`` wraps a store so that its
    writes go through this server's request chain (workload controllers' pods);
    ``service_account_key`` signs Secret-based service-account tokens."""
    every: Iterable[Store] = stores.values()  # live: custom resource stores come and go
    controllers: list[Controller] = [
        NamingController(crd_store, hub, reactor),
        CRDFinalizer(crd_store, crd_installer.store_for, hub, reactor),
        *_aggregator(stores, crd_installer, hub, reactor, aggregator_proxy),
        IPAddressRepair(
            stores[("", "v1", "services")],
            stores[(NETWORKING, "v1", "ipaddresses")],
            stores[(NETWORKING, "v1", "servicecidrs")],
            hub,
            reactor,
        ),
        EventTTL(stores[("", "v1", "events")], config.event_ttl, hub, reactor),
        LegacyTokenTracking(stores[("", "v1", "configmaps")], namespaces.SYSTEM, hub, reactor),
    ]
    context = registry.ControllerContext(
        stores=stores,
        every=every,
        hub=hub,
        reactor=reactor,
        rbac_informer=rbac_index.informer,
        pending=pending_for(hub),  # shared with the ResourceQuota admission plugin
        root_ca=root_ca_bundle(config),
        upstream_names=config.serve_upstream_groups,
        signing=signing_options(config),
        review=access_review(authorizer) if authorizer is not None else None,
        loopback=loopback,
        service_account_key=service_account_key,
        extra={"config": config, "scheme": crd_installer.scheme},
    )
    controllers.extend(registry.build(context, config.controllers))
    return controllers


def access_review(authorizer: Authorizer) -> Callable[[Obj], Awaitable[bool]]:
    """A SubjectAccessReview answered by this server's own authorizer chain."""

    async def review(spec: Obj) -> bool:
        return await allows(authorizer, subject_attributes(spec))

    return review


def signing_options(config: ServerConfig) -> SigningOptions:
    """The --cluster-signing-* CAs; without them, the CA of the PKI this server made when
    it made one and trusts it for clients (so the certificates it signs log in here)."""
    if config.embedded_pki and not config.client_ca_file:
        paths = pki.Paths.under(config.cert_dir)
        return config.signing.with_default(paths.ca_cert, paths.ca_key)
    return config.signing


def _aggregator(
    stores: Stores,
    crd_installer: CRDInstaller,
    hub: WatchHub,
    reactor: Any,
    proxy: AggregatorProxy | None,
) -> list[Controller]:
    apiservices = stores.get(APISERVICES)
    if apiservices is None:  # --runtime-config turned the group off
        return []
    services = stores[("", "v1", "services")]
    slices = stores[("discovery.platform.io", "v1", "endpointslices")]
    return [
        APIServiceRegistration(apiservices, crd_installer.scheme, hub, reactor),
        APIServiceAvailability(apiservices, services, slices, proxy, hub, reactor),
    ]


def authentication_trust(
    config: ServerConfig, client_ca_file: str, stores: Stores, hub: WatchHub, reactor: Any
) -> AuthenticationTrust:
    """kube's cluster-authentication-trust controller, which every server runs (not only the
    leader): each merges its own CAs and proxy headers into the shared ConfigMap."""
    info = AuthenticationInfo(
        client_ca_file=client_ca_file,
        requestheader_client_ca_file=config.requestheader_client_ca_file,
        username_headers=config.requestheader_username_headers,
        uid_headers=config.requestheader_uid_headers,
        group_headers=config.requestheader_group_headers,
        extra_headers_prefix=config.requestheader_extra_headers_prefix,
        allowed_names=config.requestheader_allowed_names,
    )
    where = namespaces.names(namespaces.SYSTEM, config.serve_upstream_groups)
    return AuthenticationTrust(stores[("", "v1", "configmaps")], info, where, hub, reactor)
