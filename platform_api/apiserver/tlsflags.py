"""``--tls-min-version``, ``--tls-cipher-suites``, ``--tls-curve-preferences`` and
``--tls-sni-cert-key``: Go's names, OpenSSL's settings.

kube takes the names Go's ``crypto/tls`` gives its versions and cipher suites (every
suite Go knows, the insecure ones too) and refuses any other in component-base's words.
The serving context takes OpenSSL's names for the same suites.  As in Go, the suites
apply to TLS 1.2 and older: TLS 1.3's are not configurable, so naming one changes
nothing, and a 1.3 minimum leaves the list no say.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from platform_api import gotext
from platform_api.apiserver.flagvalues import ConfigError

# The serving flags: (flag, default shown in --help, description), in serverflags.FLAGS.
SERVING_FLAGS: list[tuple[str, str, str]] = [
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
]

# Go's names -> twisted.internet.ssl.TLSVersion's (named, not imported: the supervisor
# of --workers checks flags without loading TLS).
VERSIONS = {
    "VersionTLS10": "TLSv1_0",
    "VersionTLS11": "TLSv1_1",
    "VersionTLS12": "TLSv1_2",
    "VersionTLS13": "TLSv1_3",
}
_TLS13 = ("TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256")
# Go's name -> OpenSSL's, for the suites of TLS 1.2 and older (secure, then insecure).
OPENSSL_NAMES = {
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA": "ECDHE-ECDSA-AES128-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA": "ECDHE-ECDSA-AES256-SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA": "ECDHE-RSA-AES128-SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA": "ECDHE-RSA-AES256-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "ECDHE-ECDSA-AES128-GCM-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "ECDHE-ECDSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": "ECDHE-RSA-AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305": "ECDHE-ECDSA-CHACHA20-POLY1305",  # kube's aliases
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_RSA_WITH_RC4_128_SHA": "RC4-SHA",
    "TLS_RSA_WITH_3DES_EDE_CBC_SHA": "DES-CBC3-SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA": "AES128-SHA",
    "TLS_RSA_WITH_AES_256_CBC_SHA": "AES256-SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA256": "AES128-SHA256",
    "TLS_RSA_WITH_AES_128_GCM_SHA256": "AES128-GCM-SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384": "AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA": "ECDHE-ECDSA-RC4-SHA",
    "TLS_ECDHE_RSA_WITH_RC4_128_SHA": "ECDHE-RSA-RC4-SHA",
    "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA": "ECDHE-RSA-DES-CBC3-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256": "ECDHE-ECDSA-AES128-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256": "ECDHE-RSA-AES128-SHA256",
}


def min_version(name: str) -> str:
    """A --tls-min-version value, checked ("" is kube's default, VersionTLS12)."""
    if name and name not in VERSIONS:
        raise ConfigError(f'unknown tls version "{name}"')
    return name


def cipher_suites(names: tuple[str, ...]) -> tuple[str, ...]:
    """--tls-cipher-suites, checked: Go's names of suites Go knows, of which this
    OpenSSL has at least one (Go still has RC4; OpenSSL 3 has not)."""
    for name in names:
        if name not in OPENSSL_NAMES and name not in _TLS13:
            raise ConfigError(f"Cipher suite {name} not supported or doesn't exist")
    wanted = openssl_cipher_string(names)
    if wanted:
        from OpenSSL import SSL  # noqa: PLC0415 - only when suites are named

        try:
            SSL.Context(SSL.TLS_METHOD).set_cipher_list(wanted.encode())
        except SSL.Error:
            listed = ", ".join(names)
            raise ConfigError(
                f"none of the cipher suites {listed} is available in this server's OpenSSL"
            ) from None
    return names


# Go's crypto/tls CurveIDs (the ones Go 1.26, kube 1.36's, names) -> OpenSSL's groups.
CURVES = {
    23: "P-256",
    24: "P-384",
    25: "P-521",
    29: "X25519",
    4587: "SecP256r1MLKEM768",
    4588: "X25519MLKEM768",
    4589: "SecP384r1MLKEM1024",
}


def curve_preferences(text: str | None) -> tuple[int, ...]:
    """--tls-curve-preferences: Go's numeric CurveIDs, checked in component-base's words
    (and refused when this OpenSSL lacks them all)."""
    if not text:
        return ()
    ids: list[int] = []
    for item in text.split(","):
        try:
            ids.append(gotext.parse_int(item.strip(), base=0, bits=32))
        except ValueError as e:
            raise ConfigError(
                f'invalid argument "{text}" for "--tls-curve-preferences" flag: {e}'
            ) from None
    for i, curve in enumerate(ids):
        if not 0 < curve <= 0xFFFF:
            raise ConfigError(f"curve preference {curve} is out of range (must be 1-65535)")
        if curve in ids[:i]:
            raise ConfigError(f"duplicate curve preference {curve}")
        if curve not in CURVES:
            raise ConfigError(
                f"curve preference {curve} is not supported by the current Go version"
            )
    from OpenSSL import SSL  # noqa: PLC0415 - only when curves are named

    try:
        set_groups(SSL.Context(SSL.TLS_METHOD), tuple(ids))
    except ValueError:
        raise ConfigError(
            f"none of the curves {text} is available in this server's OpenSSL"
        ) from None
    return tuple(ids)


def set_groups(ctx: Any, curves: tuple[int, ...]) -> None:
    """The key exchange groups an ``OpenSSL.SSL.Context`` offers, in Go's preference
    order: OpenSSL's SSL_CTX_set1_groups_list, which pyOpenSSL reaches only through its
    bindings (its public ``set_tmp_ecdh`` takes one curve).  ValueError when OpenSSL
    knows none of them."""
    from OpenSSL._util import lib  # noqa: PLC0415 - the pinned pyOpenSSL's own bindings

    # "?": a group this OpenSSL lacks is passed over, as Go passes over what it lacks.
    names = ":".join(f"?{CURVES[curve]}" for curve in curves).encode()
    if lib.SSL_CTX_set1_curves_list(ctx._context, names) != 1:
        raise ValueError(names.decode())


def openssl_cipher_string(names: tuple[str, ...]) -> str:
    """OpenSSL's cipher list for the TLS 1.2 suites of ``names`` ("" when none)."""
    return ":".join(OPENSSL_NAMES[n] for n in names if n in OPENSSL_NAMES)


@dataclass(frozen=True)
class NamedCertKey:
    """One --tls-sni-cert-key: a certificate and key, and the names it serves (none:
    the certificate's own)."""

    cert_file: str
    key_file: str
    names: tuple[str, ...] = ()


def named_cert_keys(values: list[str]) -> tuple[NamedCertKey, ...]:
    """Each --tls-sni-cert-key value as component-base's NamedCertKey reads it:
    ``cert,key`` or ``cert,key:name,*.name``."""
    return tuple(_named_cert_key(value) for value in values)


def _named_cert_key(value: str) -> NamedCertKey:
    def refused(why: str) -> ConfigError:
        return ConfigError(f'invalid argument "{value}" for "--tls-sni-cert-key" flag: {why}')

    keycert, colon, listed = value.partition(":")
    names: tuple[str, ...] = ()
    if colon:
        if not listed.strip():
            raise refused("empty names list is not allowed")
        names = tuple(name.strip() for name in listed.strip().split(","))
    files = keycert.strip().split(",")
    if len(files) != 2:
        raise refused("expected comma separated certificate and key file paths")
    return NamedCertKey(files[0].strip(), files[1].strip(), names)
