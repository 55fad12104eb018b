"""kube-apiserver's flags as ``twistd platform-apiserver`` takes them: name, the default
``--help`` shows, the description (kube's words where kube has the flag), and which flags
are booleans or gathered from every occurrence.  ``config.from_flags`` applies them."""

from __future__ import annotations

from platform_api.apiserver import (
    aggregatoroptions,
    authflags,
    authzflags,
    endpointoptions,
    storageoptions,
    tlsflags,
)
from platform_api.apiserver.audit import options as audit_options
from platform_api.apiserver.flagvalues import ARRAY, LIST
from platform_api.controllers import legacytokenoptions, signingoptions

# (flag, default shown in --help, description); defaults are applied by config.from_flags.
FLAGS: list[tuple[str, str, str]] = [
    (
        "data-dir",
        "./platform-data",
        "Directory of the LMDB database, the PKI and admin.kubeconfig.",
    ),
    ("lmdb-map-size", "8Gi", "Largest size the LMDB database may grow to (virtual memory)."),
    (
        "encryption-provider-config",
        "",
        "The file containing configuration for encryption providers to be used for storing "
        "secrets in etcd",
    ),
    (
        "encryption-provider-config-automatic-reload",
        "false",
        "Determines if the file set by --encryption-provider-config should be automatically "
        "reloaded if the disk contents change. Setting this to true disables the ability to "
        "uniquely identify distinct KMS plugins via the API server healthz endpoints.",
    ),
    *tlsflags.SERVING_FLAGS,
    *authflags.AUTHENTICATION_FLAGS,
    *authzflags.AUTHORIZATION_FLAGS,
    ("max-requests-inflight", "400", "Maximum non-mutating requests in flight; 0 means no limit."),
    (
        "max-mutating-requests-inflight",
        "200",
        "Maximum mutating requests in flight; 0 means no limit.",
    ),
    (
        "enable-priority-and-fairness",
        "true",
        "If true, replace the max-in-flight handler with an enhanced one that queues and "
        "dispatches with priority and fairness",
    ),
    (
        "default-not-ready-toleration-seconds",
        "300",
        "tolerationSeconds of pods' notReady:NoExecute toleration.",
    ),
    (
        "default-unreachable-toleration-seconds",
        "300",
        "tolerationSeconds of pods' unreachable:NoExecute toleration.",
    ),
    ("request-timeout", "1m0s", "How long a handler may take before the request times out (504)."),
    ("livez-grace-period", "0s", "How long /livez ignores an unfinished startup sequence."),
    ("shutdown-delay-duration", "0s", "Delay of termination during which /readyz fails."),
    ("event-ttl", "1h0m0s", "Amount of time to retain events."),
    (
        "workers",
        "1",
        "Server processes sharing the port and the LMDB data directory (one per core to use "
        "every core).",
    ),
    (
        "service-cluster-ip-range",
        "10.0.0.0/24",
        "CIDR range from which Service cluster IPs are assigned.",
    ),
    (
        "service-node-port-range",
        "30000-32767",
        "A port range to reserve for services with NodePort visibility. Example: '30000-32767'. "
        "Inclusive at both ends of the range.",
    ),
    (
        "kubernetes-service-node-port",
        "0",
        "If non-zero, the Kubernetes master service (which apiserver creates/maintains) will "
        "be of type NodePort, using this as the value of the port. If zero, the Kubernetes "
        "master service will be of type ClusterIP.",
    ),
    (
        "min-request-timeout",
        "1800",
        "The minimum number of seconds a watch is kept open before it is ended: a random "
        "value between this and twice this.",
    ),
    (
        "allow-privileged",
        "true",
        "If true, allow privileged containers (kube's default is false; this server's is "
        "true, as cluster installers set it).",
    ),
    (
        "etcd-compaction-interval",
        "5m0s",
        "How long change history is kept for lists (on LMDB, for watches too).",
    ),
    (
        "etcd-count-metric-poll-period",
        "1m0s",
        "Frequency of counting the stored objects of each resource, which priority and "
        "fairness's work estimates read. 0 disables the counting.",
    ),
    (
        "enable-admission-plugins",
        "",
        "Admission plugins to enable besides the default ones (NamespaceLifecycle, "
        "MutatingAdmissionWebhook, ValidatingAdmissionPolicy, ValidatingAdmissionWebhook), "
        "comma-delimited: those and NodeRestriction.",
    ),
    (
        "admission-control-config-file",
        "",
        "AdmissionConfiguration file: per webhook plugin, a kubeconfig whose users are the "
        "credentials presented to each webhook host.",
    ),
    (
        "disable-admission-plugins",
        "",
        "Admission plugins to disable although on by default, comma-delimited.",
    ),
    (
        "serve-upstream-groups",
        "false",
        "Also serve every *.platform.io group under its upstream *.k8s.io name (same objects), "
        "so stock kubectl, client-go leader election and controller-runtime run unmodified.",
    ),
    (
        "feature-gates",
        "",
        "Comma-separated [kube:]Name=true|false pairs: kube-apiserver v1.36's feature gates, "
        "stages, defaults and locks, e.g. CBORServingAndStorage=true.",
    ),
    (
        "show-hidden-metrics-for-version",
        "",
        "The previous version for which you want to show hidden metrics. Only the previous "
        "minor version is meaningful, other values will not be allowed. The format is "
        "<major>.<minor>, e.g.: '1.35'.",
    ),
    (
        "runtime-config",
        "",
        "Comma-separated key[=value] pairs that turn API versions on or off: api/all, api/ga, "
        "api/beta, api/alpha, <group>/<version>, <group>/<version>/<resource>; e.g. "
        "api/alpha=true or batch/v1=false.",
    ),
    (
        "egress-selector-config-file",
        "",
        "File with apiserver egress selector configuration (EgressSelectorConfiguration; "
        "only Direct connections: this server dials directly).",
    ),
    (
        "tracing-config-file",
        "",
        "File with apiserver tracing configuration (TracingConfiguration): spans of every "
        "request exported over OTLP gRPC.",
    ),
    (
        "emulated-version",
        "kube=1.36",
        "The versions different components emulate their capabilities (APIs, features, ...) "
        "of. Version format could only be major.minor, for example: "
        "'--emulated-version=kube=1.36'. This server is v1.36 and emulates no older release.",
    ),
    (
        "min-compatibility-version",
        "kube=1.35",
        "The min version of control plane components the server should be compatible with. "
        "Must be less or equal to the emulated-version. Options are: kube=1.33..1.36.",
    ),
    (
        "emulation-forward-compatible",
        "false",
        "Can only be set to true if the emulation version is lower than the binary version "
        "(never here).",
    ),
    (
        "runtime-config-emulation-forward-compatible",
        "false",
        "Can only be set to true if the emulation version is lower than the binary version "
        "(never here).",
    ),
    (
        "enable-garbage-collector",
        "true",
        "Enables the generic garbage collector. MUST be synced with the corresponding flag of "
        "the kube-controller-manager.",
    ),
    (
        "controllers",
        "*",
        "Controllers to run in the server: '*' all, 'foo' on, '-foo' off (namespace-controller, "
        "garbage-collector-controller, clusterrole-aggregation-controller, "
        "serviceaccount-controller, ...). Disabled-by-default controllers: "
        "bootstrap-signer-controller, token-cleaner-controller. Empty or '-*': none (run "
        "twistd platform-controller-manager instead).",
    ),
    *signingoptions.SIGNING_FLAGS,
    *legacytokenoptions.CLEANER_FLAGS,
    *audit_options.AUDIT_FLAGS,
    *storageoptions.STORAGE_FLAGS,
    *aggregatoroptions.AGGREGATOR_FLAGS,
    *endpointoptions.ENDPOINT_FLAGS,
]
BOOL_FLAGS = (
    *audit_options.BOOL_FLAGS,
    *aggregatoroptions.BOOL_FLAGS,
    "anonymous-auth",
    "service-account-lookup",
    "enable-bootstrap-token-auth",
    "serve-upstream-groups",
    "enable-priority-and-fairness",
    "encryption-provider-config-automatic-reload",
    "allow-privileged",
    "disable-http2-serving",
    "service-account-extend-token-expiration",
    "enable-garbage-collector",
    "emulation-forward-compatible",
    "runtime-config-emulation-forward-compatible",
)
# kube-apiserver's slice, array and map flags: every occurrence counts.
GATHERED = {
    **dict.fromkeys(
        (
            "api-audiences", "authorization-mode", "cors-allowed-origins",
            "disable-admission-plugins", "enable-admission-plugins", "etcd-servers",
            "emulated-version", "feature-gates", "min-compatibility-version",
            "oidc-required-claim", "oidc-signing-algs",
            "requestheader-allowed-names", "requestheader-extra-headers-prefix",
            "requestheader-group-headers", "requestheader-uid-headers",
            "requestheader-username-headers", "runtime-config", "service-account-issuer",
            "service-account-key-file", "strict-transport-security-directives",
            "tls-cipher-suites", "tls-curve-preferences",
        ),
        LIST,
    ),
    "tls-sni-cert-key": ARRAY,
}  # fmt: skip
