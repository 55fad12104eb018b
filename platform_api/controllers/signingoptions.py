"""kube-controller-manager's ``--cluster-signing-*`` flags, for both homes of the controllers.

One CA for every built-in signer (``--cluster-signing-cert-file`` and ``-key-file``) or one
per signer, never both, as kube checks.  The API server, which runs the controllers
in-process, also signs with the CA it made itself when it made its own PKI and was given
none of these flags: certificates from ``platform.io/kube-apiserver-client`` then log in
to it, which is what a user asking for one wants.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from platform_api.apiserver.flagvalues import ConfigError, parse_duration
from platform_api.controllers import certauthority
from platform_api.scheme import signers

Given = Callable[[str], str | None]
YEAR = 8760 * 3600.0

# The per-signer flags' stems -> (signer, kube's label for it in errors, swapped as kube has them).
PER_SIGNER = {
    "kubelet-serving": (signers.KUBELET_SERVING, "cluster-signing-kubelet-serving"),
    "kubelet-client": (
        signers.KUBE_APISERVER_CLIENT_KUBELET,
        "cluster-signing-kube-apiserver-client",
    ),
    "kube-apiserver-client": (signers.KUBE_APISERVER_CLIENT, "cluster-signing-kube-apiserver"),
    "legacy-unknown": (signers.LEGACY_UNKNOWN, "cluster-signing-legacy-unknown"),
}
_CERT = "Filename containing a PEM-encoded X509 CA certificate used to issue"
_KEY = "Filename containing a PEM-encoded RSA or ECDSA private key used to sign"
_SPECIFIC = "If specified, --cluster-signing-{cert,key}-file must not be set."

SIGNING_FLAGS: list[tuple[str, str, str]] = [
    (
        "cluster-signing-cert-file",
        "",
        f"{_CERT} cluster-scoped certificates.  If specified, no more specific "
        "--cluster-signing-* flag may be specified.",
    ),
    (
        "cluster-signing-key-file",
        "",
        f"{_KEY} cluster-scoped certificates.  If specified, no more specific "
        "--cluster-signing-* flag may be specified.",
    ),
    *[
        (
            f"cluster-signing-{stem}-{part}-file",
            "",
            f"{text} certificates for the {signer} signer.  {_SPECIFIC}",
        )
        for stem, (signer, _label) in PER_SIGNER.items()
        for part, text in (("cert", _CERT), ("key", _KEY))
    ],
    (
        "cluster-signing-duration",
        "8760h0m0s",
        "The max length of duration signed certificates will be given.  Individual CSRs may "
        "request shorter certs by setting spec.expirationSeconds.",
    ),
]


@dataclass
class SigningOptions:
    """Which CA files sign for each built-in signer (none: that signer does not sign)."""

    files: dict[str, tuple[str, str]] = field(default_factory=dict)
    duration: float = YEAR
    explicit: bool = False  # any --cluster-signing-*-file flag was given

    def with_default(self, cert_file: str, key_file: str) -> SigningOptions:
        """These options, or every signer on this CA when no file flag was given."""
        if self.explicit:
            return self
        every = dict.fromkeys(signers.BUILT_IN, (cert_file, key_file))
        return SigningOptions(every, self.duration, explicit=False)


def from_flags(given: Given) -> SigningOptions:
    """SigningOptions from the flags; ConfigError with kube's words when they conflict.
    Half of the one-CA pair is no error in kube: the signers then do not run."""
    out = SigningOptions()
    text = given("cluster-signing-duration")
    if text is not None:
        out.duration = parse_duration("cluster-signing-duration", text)
    cert, key = given("cluster-signing-cert-file") or "", given("cluster-signing-key-file") or ""
    errors = []
    for stem, (signer, label) in PER_SIGNER.items():
        pair = (
            given(f"cluster-signing-{stem}-cert-file") or "",
            given(f"cluster-signing-{stem}-key-file") or "",
        )
        if pair[1] and not pair[0]:
            errors.append(f'"{label}": cannot specify key without cert')
        elif pair[0] and not pair[1]:
            errors.append(f'"{label}": cannot specify cert without key')
        elif all(pair):
            out.files[signer] = pair
        out.explicit = out.explicit or any(pair)
    if (cert or key) and out.explicit:
        errors.append(
            "cannot specify --cluster-signing-{cert,key}-file and other "
            "--cluster-signing-*-file flags at the same time"
        )
    if errors:
        raise ConfigError(", ".join(errors))
    _check_files(given)
    if cert or key:
        out.explicit = True
        if cert and key:
            out.files = dict.fromkeys(signers.BUILT_IN, (cert, key))
    for pair in set(out.files.values()):
        try:  # kube's signer loads its CA as it starts, and fails to start without it
            certauthority.load(*pair)
        except certauthority.SigningError as e:
            raise ConfigError(str(e)) from None
    return out


def _check_files(given: Given) -> None:
    """A file that is not there is refused at start (kube's signer fails to load it)."""
    for name, _default, _help in SIGNING_FLAGS:
        path = given(name) if name.endswith("-file") else None
        if path and not os.path.isfile(path):
            raise ConfigError(f"--{name}: {path}: no such file")
