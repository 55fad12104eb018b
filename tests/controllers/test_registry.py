"""The one controllers table: kube-controller-manager's ``--controllers`` syntax."""

from __future__ import annotations

import subprocess
import sys

import pytest

from platform_api.controllers import registry


def test_star_selects_the_default_on_controllers() -> None:
    chosen = registry.parse("*")
    assert chosen == registry.default_on()
    assert {"namespace-controller", "garbage-collector-controller"} <= chosen
    assert "bootstrap-signer-controller" not in chosen  # off by default, as in kube


def test_names_aliases_and_negation() -> None:
    assert registry.parse("*,-garbagecollector") == registry.default_on() - {
        "garbage-collector-controller"
    }
    assert registry.parse("serviceaccount,namespace-controller") == {
        "serviceaccount-controller",
        "namespace-controller",
    }
    assert registry.parse("-namespace,namespace") == frozenset()  # -foo wins, as in kube


@pytest.mark.parametrize("text", ["", "-*", " , "])
def test_empty_or_minus_star_selects_none(text: str) -> None:
    assert registry.parse(text) == frozenset()


def test_unknown_name_is_refused_in_kubes_words() -> None:
    with pytest.raises(ValueError) as e:
        registry.parse("*,nope")
    assert str(e.value) == '"nope" is not in the list of known controllers'


def test_the_names_table_loads_no_controller() -> None:
    """config.py reads it on every start, the worker supervisor's too: importing it must
    not load the controllers, their base class or the resource registry (~40 ms)."""
    code = (
        "import sys, platform_api.controllers.registry as r; r.parse('*'); "
        "print(sorted(m for m in sys.modules if m.startswith(('platform_api.controllers.', "
        "'platform_api.registry'))))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    )
    assert loaded.stdout.strip() == (
        "['platform_api.controllers.credentials', 'platform_api.controllers.registry', "
        "'platform_api.controllers.workloads']"
    ), loaded.stderr
