"""kube-apiserver's flags as ``twistd platform-apiserver`` takes them: name, the default
``--help`` shows, the description (kube's words where kube has the flag), and which flags
are booleans or gathered from every occurrence.  ``config.from_flags`` applies them."""

from __future__ import annotations

from platform_api.apiserver import (
    aggregatoroptions,
    endpointoptions,
    storageoptions,
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
    (
        "secure-port",
        "6443",
        "The port on which to serve HTTPS with authentication and authorization.",
    ),
    ("bind-address", "0.0.0.0", "The IP address on which to listen for the --secure-port port."),
    (
        "tls-cert-file",
        "",
        "File containing the x509 certificate for HTTPS (CA cert, if any, concatenated after "
        "server cert). Without it, a self-signed PKI is created under --cert-dir.",
    ),
    ("tls-private-key-file", "", "File containing the x509 private key matching --tls-cert-file."),
    (
        "tls-min-version",
        "VersionTLS12",
        "Minimum TLS version supported. Possible values: VersionTLS10, VersionTLS11, "
        "VersionTLS12, VersionTLS13",
    ),
    ("disable-http2-serving", "false", "If true, HTTP2 serving will be disabled"),
    (
        "strict-transport-security-directives",
        "",
        "List of directives for HSTS, comma separated. If this list is empty, then HSTS "
        "directives will not be added. Example: 'max-age=31536000,includeSubDomains,preload'",
    ),
    (
        "cors-allowed-origins",
        "",
        "List of allowed origins for CORS, comma separated: regular expressions pinned to the "
        "start ('^' or '//') and the end ('$' or ':') of the host, e.g. "
        "'//example\\.com(:|$)'. If this list is empty CORS will not be enabled.",
    ),
    (
        "tls-curve-preferences",
        "",
        "Comma-separated list of numeric Go crypto/tls CurveID values, as the allowed key "
        "exchange mechanisms for the server (23 P-256, 24 P-384, 25 P-521, 29 X25519, 4587 "
        "SecP256r1MLKEM768, 4588 X25519MLKEM768, 4589 SecP384r1MLKEM1024). If omitted, the "
        "default curves are used.",
    ),
    (
        "tls-sni-cert-key",
        "[]",
        "A pair of x509 certificate and private key file paths, optionally suffixed with a "
        "list of domain patterns which are fully qualified domain names, possibly with "
        "prefixed wildcard segments. If no domain patterns are provided, the names of the "
        "certificate are extracted. Non-wildcard matches trump over wildcard matches, "
        "explicit domain patterns trump over extracted names. For multiple key/certificate "
        "pairs, use the --tls-sni-cert-key multiple times. Examples: "
        '"example.crt,example.key" or "foo.crt,foo.key:*.foo.com,foo.com".',
    ),
    (
        "tls-cipher-suites",
        "",
        "Comma-separated list of cipher suites for the server, Go's names (TLS 1.2 and "
        "older; TLS 1.3's are not configurable). If omitted, the default suites are used.",
    ),
    (
        "cert-dir",
        "<data-dir>/pki",
        "Where the generated TLS certs are. Ignored with --tls-cert-file.",
    ),
    (
        "client-ca-file",
        "",
        "Client certificates signed by an authority in this file are authenticated: CN is the "
        "user, each O a group. Defaults to the generated CA when the PKI is generated.",
    ),
    (
        "token-auth-file",
        "",
        'Static bearer tokens, one per line as CSV: token,user,uid,"group1,group2".',
    ),
    (
        "requestheader-client-ca-file",
        "",
        "Root certificates of authenticating proxies: their user headers are trusted only on "
        "connections with a client certificate these authorities signed.",
    ),
    (
        "requestheader-allowed-names",
        "",
        "Common names of proxy client certificates allowed to set user headers (empty: any).",
    ),
    (
        "requestheader-username-headers",
        "",
        "Request headers holding the user name, e.g. X-Remote-User.",
    ),
    ("requestheader-uid-headers", "", "Request headers holding the user's UID, e.g. X-Remote-Uid."),
    ("requestheader-group-headers", "", "Request headers holding groups, e.g. X-Remote-Group."),
    (
        "requestheader-extra-headers-prefix",
        "",
        "Request header prefixes for extra user information, e.g. X-Remote-Extra-.",
    ),
    (
        "authentication-token-webhook-config-file",
        "",
        "kubeconfig-format file naming a remote service that reviews bearer tokens (TokenReview).",
    ),
    (
        "authentication-token-webhook-cache-ttl",
        "2m0s",
        "How long to cache the webhook's answers.",
    ),
    (
        "authentication-token-cache-ttl",
        "10s",
        "How long a bearer token that authenticated is taken without asking its "
        "authenticator again (kube-apiserver's fixed 10s; this server's flag). 0s turns the "
        "cache off, so a revoked token is refused at once.",
    ),
    (
        "authentication-token-webhook-version",
        "v1beta1",
        "The TokenReview version sent to the webhook: v1beta1 or v1.",
    ),
    (
        "service-account-signing-key-file",
        "<cert-dir>/sa.key",
        "Private key (RSA or ECDSA, PEM) that signs service-account tokens.",
    ),
    (
        "service-account-key-file",
        "",
        "Comma-separated PEM files of further keys that verify service-account tokens.",
    ),
    (
        "service-account-signing-endpoint",
        "",
        "Path to socket where a external JWT signer is listening (@name: an abstract "
        "socket). This flag is mutually exclusive with --service-account-signing-key-file "
        "and --service-account-key-file.",
    ),
    (
        "service-account-issuer",
        "https://platform.default.svc.cluster.local",
        "Issuer of service-account tokens; a comma list accepts several, the first issues.",
    ),
    ("api-audiences", "", "Audiences the API accepts in tokens (default: the issuers)."),
    (
        "service-account-jwks-uri",
        "",
        "Overrides the URI for the JSON Web Key Set in the discovery doc served at "
        "/.well-known/openid-configuration (https only).",
    ),
    (
        "service-account-lookup",
        "true",
        "Reject service-account tokens whose account or bound object no longer exists.",
    ),
    (
        "service-account-max-token-expiration",
        "0s",
        "Longest lifetime a TokenRequest may ask for (0: no limit).",
    ),
    (
        "service-account-extend-token-expiration",
        "true",
        "Turns on projected service account expiration extension during token generation, "
        "which helps safe transition from legacy token to bound service account token "
        "feature. If this flag is enabled, admission injected tokens would be extended up to "
        "1 year to prevent unexpected failure during transition, ignoring value of "
        "service-account-max-token-expiration.",
    ),
    (
        "enable-bootstrap-token-auth",
        "false",
        "Accept bootstrap tokens from Secrets of type bootstrap.platform.io/token in "
        "platform-system.",
    ),
    (
        "authentication-config",
        "",
        "AuthenticationConfiguration file (JWT authenticators with CEL rules, anonymous "
        "access); reloaded when it changes. Exclusive with --oidc-* and --anonymous-auth.",
    ),
    ("oidc-issuer-url", "", "https URL of the OpenID provider whose ID tokens are accepted."),
    ("oidc-client-id", "", "Client ID every ID token must be issued for (its audience)."),
    ("oidc-username-claim", "sub", "ID token claim holding the user name."),
    (
        "oidc-username-prefix",
        "",
        "Prefix of OIDC user names; '-' for none (default: '<issuer>#' unless the claim is email).",
    ),
    ("oidc-groups-claim", "", "ID token claim holding the user's groups."),
    ("oidc-groups-prefix", "", "Prefix of OIDC groups."),
    ("oidc-required-claim", "", "Comma list of key=value claims every ID token must carry."),
    (
        "oidc-ca-file",
        "",
        "CA of the OpenID provider's serving certificate (default: system roots).",
    ),
    ("oidc-signing-algs", "RS256", "Comma list of accepted signing algorithms."),
    (
        "anonymous-auth",
        "true",
        "Enables anonymous requests (with AlwaysAllow: only to the health endpoints).",
    ),
    (
        "authorization-mode",
        "AlwaysAllow",
        "Ordered list of authorizers, comma-delimited: AlwaysAllow,AlwaysDeny,ABAC,RBAC,Node,Webhook.",
    ),
    (
        "authorization-config",
        "",
        "AuthorizationConfiguration file (the authorizer chain; webhooks with CEL match "
        "conditions); reloaded when it changes. Exclusive with --authorization-mode and the "
        "--authorization-webhook-* flags.",
    ),
    (
        "authorization-policy-file",
        "",
        "ABAC policies, one JSON object per line (with --authorization-mode=ABAC).",
    ),
    (
        "authorization-webhook-config-file",
        "",
        "kubeconfig-format file naming a remote SubjectAccessReview service (mode Webhook).",
    ),
    ("authorization-webhook-version", "v1beta1", "SubjectAccessReview version: v1beta1 or v1."),
    (
        "authorization-webhook-cache-authorized-ttl",
        "5m0s",
        "How long to cache the webhook's allowed answers.",
    ),
    (
        "authorization-webhook-cache-unauthorized-ttl",
        "30s",
        "How long to cache the webhook's other answers.",
    ),
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
    ("etcd-compaction-interval", "5m0s", "How long change history is kept for watches and lists."),
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
