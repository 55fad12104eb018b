"""kube's command-line conventions shared by our twistd plugins: gathered flags."""

from __future__ import annotations

from pathlib import Path

import pytest

from platform_api.apiserver.flagoptions import gather
from platform_api.apiserver.flagvalues import ARRAY, LIST
from platform_api.apiserver.tap import Options
from platform_api.controllermanager.tap import Options as ManagerOptions

GATHERED = {"a": LIST, "pairs": ARRAY}


@pytest.mark.parametrize(
    ("args", "folded"),
    [
        (["--a=1", "--b=2", "--a=3,4"], ["--a=1,3,4", "--b=2"]),
        (["--b", "x", "--a", "1", "--a=2"], ["--b", "x", "--a=1,2"]),
        (["--pairs=c,k:n", "--pairs", "d,l"], ["--pairs=c,k:n\0d,l"]),
        (["--a=1", "--", "--a=2"], ["--a=1", "--", "--a=2"]),  # after --: arguments
        (["--a"], ["--a"]),  # no value: getopt's error stands
        (["--ab=1", "--a=2"], ["--ab=1", "--a=2"]),
    ],
)
def test_gather_folds_occurrences_into_the_first(args: list[str], folded: list[str]) -> None:
    assert gather(args, GATHERED) == folded


def test_repeated_kube_flags_all_count(tmp_path: Path) -> None:
    """pflag appends each occurrence of a slice, array or map flag; getopt kept the last."""
    options = Options()
    options.parseOptions(
        [
            f"--data-dir={tmp_path}",
            "--enable-admission-plugins=NodeRestriction",
            "--enable-admission-plugins",
            "AlwaysPullImages",
            "--api-audiences=a",
            "--api-audiences=b,c",
            "--service-account-issuer=https://one.example",
            "--service-account-issuer=https://two.example",
            "--feature-gates=AllAlpha=false",
            "--feature-gates=AllBeta=false",
        ]
    )
    cfg = options.config
    assert "AlwaysPullImages" in cfg.admission_plugins
    assert "NodeRestriction" in cfg.admission_plugins
    assert cfg.api_audiences == ("a", "b", "c")
    assert cfg.service_account_issuers == ("https://one.example", "https://two.example")
    assert options["feature-gates"] == "AllAlpha=false,AllBeta=false"


def test_the_controller_managers_controllers_gather_too() -> None:
    options = ManagerOptions()
    options.parseOptions(
        ["--kubeconfig=/dev/null", "--controllers=*", "--controllers=-garbage-collector-controller"]
    )
    assert options["controllers"] == "*,-garbage-collector-controller"
