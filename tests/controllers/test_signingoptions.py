"""The --cluster-signing-* flags: kube-controller-manager's names and checks, in both homes."""

from __future__ import annotations

from pathlib import Path

import pytest

from platform_api.apiserver import config as server_config
from platform_api.apiserver.controllers import signing_options
from platform_api.apiserver.flagvalues import ConfigError
from platform_api.controllermanager import tap as manager_tap
from platform_api.controllers import signingoptions
from platform_api.scheme import signers
from tests.controllers.test_csrsigning import make_ca


@pytest.fixture(autouse=True)
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A CA certificate "c" and its key "k" in the working directory: the flags' files
    are read as the options are parsed."""
    monkeypatch.chdir(tmp_path)
    cert, key = make_ca(tmp_path / "ca")
    Path(cert).rename(tmp_path / "c")
    Path(key).rename(tmp_path / "k")


def parse(flags: dict[str, str]) -> signingoptions.SigningOptions:
    return signingoptions.from_flags(flags.get)


def test_one_ca_for_every_signer() -> None:
    options = parse({"cluster-signing-cert-file": "c", "cluster-signing-key-file": "k"})
    assert options.files == dict.fromkeys(signers.BUILT_IN, ("c", "k"))
    assert options.duration == 8760 * 3600.0


def test_per_signer_files_and_duration() -> None:
    options = parse(
        {
            "cluster-signing-kube-apiserver-client-cert-file": "c",
            "cluster-signing-kube-apiserver-client-key-file": "k",
            "cluster-signing-duration": "24h",
        }
    )
    assert options.files == {signers.KUBE_APISERVER_CLIENT: ("c", "k")}
    assert options.duration == 86400.0
    assert options.with_default("ca.crt", "ca.key") is options  # given: no default


@pytest.mark.parametrize(
    "flags, message",
    [
        (
            {"cluster-signing-kubelet-serving-key-file": "k"},
            '"cluster-signing-kubelet-serving": cannot specify key without cert',
        ),
        (  # kube's labels for these two are swapped; so are these
            {"cluster-signing-kubelet-client-cert-file": "c"},
            '"cluster-signing-kube-apiserver-client": cannot specify cert without key',
        ),
        (
            {"cluster-signing-kube-apiserver-client-cert-file": "c"},
            '"cluster-signing-kube-apiserver": cannot specify cert without key',
        ),
        (
            {
                "cluster-signing-cert-file": "c",
                "cluster-signing-key-file": "k",
                "cluster-signing-legacy-unknown-cert-file": "c",
                "cluster-signing-legacy-unknown-key-file": "k",
            },
            "cannot specify --cluster-signing-{cert,key}-file and other "
            "--cluster-signing-*-file flags at the same time",
        ),
    ],
)
def test_refused_as_kube_refuses(flags: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as e:
        parse(flags)
    assert str(e.value) == message


def test_half_of_the_one_ca_pair_signs_nothing() -> None:
    options = parse({"cluster-signing-cert-file": "c"})
    assert options.files == {} and options.explicit
    assert options.with_default("ca.crt", "ca.key").files == {}


def test_the_server_signs_with_its_own_ca_by_default() -> None:
    cfg = server_config.from_flags({"cert-dir": "/pki"})
    assert signing_options(cfg).files == dict.fromkeys(
        signers.BUILT_IN, ("/pki/ca.crt", "/pki/ca.key")
    )
    given_ca = server_config.from_flags({"cert-dir": "/pki", "client-ca-file": "c"})
    assert signing_options(given_ca).files == {}  # its CA is someone else's: kube's default


def test_a_missing_file_is_refused() -> None:
    with pytest.raises(ConfigError) as e:
        parse({"cluster-signing-cert-file": "c", "cluster-signing-key-file": "nowhere"})
    assert str(e.value) == "--cluster-signing-key-file: nowhere: no such file"


def test_a_file_that_is_no_ca_is_refused() -> None:
    with pytest.raises(ConfigError) as e:
        parse({"cluster-signing-cert-file": "k", "cluster-signing-key-file": "k"})
    assert str(e.value).startswith("error reading CA cert file 'k': ")
    with pytest.raises(ConfigError) as e:
        parse({"cluster-signing-cert-file": "c", "cluster-signing-key-file": "c"})
    assert str(e.value).startswith("error reading CA key file 'c': ")


def test_the_manager_takes_the_flags() -> None:
    cfg = manager_tap.from_flags(
        {"kubeconfig": "k", "cluster-signing-cert-file": "c", "cluster-signing-key-file": "k"}
    )
    assert cfg.signing.files[signers.KUBELET_SERVING] == ("c", "k")
    options = manager_tap.Options()
    options.parseOptions(["--kubeconfig=k", "--cluster-signing-duration=1h"])
    assert options.config.signing.duration == 3600.0
