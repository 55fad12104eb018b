"""--encryption-provider-config-automatic-reload: the file is polled and swapped in."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from twisted.internet.task import Clock

from platform_api.storage.encryption.dynamic import RELOAD_INTERVAL, EncryptionAtRest
from platform_api.storage.transformer import TransformError

from .helpers import keys, rule, write_config

KEY = b"/core/secrets/default/db"
DATA = b'{"kind":"Secret"}'


def test_reload_swaps_and_keeps_old_on_bad_file(tmp_path: Path) -> None:
    clock = Clock()
    first = keys("one")
    path = write_config(tmp_path / "enc.yaml", rule(["secrets"], {"aescbc": first}))
    enc = EncryptionAtRest(path, True, clock)
    assert [name for name, _ in enc.health_checks()] == ["kms-providers"]
    assert enc.health() is None  # no KMS: a no-op check, as kube's
    enc.start()
    old = enc.to_storage(KEY, DATA)
    assert old.startswith(b"k8s:enc:aescbc:v1:one:")
    both = {"keys": keys("two")["keys"] + first["keys"]}
    write_config(tmp_path / "enc.yaml", rule(["secrets"], {"aescbc": both}))
    clock.advance(RELOAD_INTERVAL)
    assert enc.to_storage(KEY, DATA).startswith(b"k8s:enc:aescbc:v1:two:")
    assert enc.from_storage(KEY, old) == (DATA, True)
    current = enc.current
    (tmp_path / "enc.yaml").write_text("kind: Nope\n")
    clock.advance(RELOAD_INTERVAL)
    assert enc.current is current  # refused: the old configuration stays
    clock.advance(RELOAD_INTERVAL)  # and is not retried until the file changes again
    assert enc.current is current
    enc.stop()
    assert not clock.getDelayedCalls()


def test_no_reload_no_kms_no_health_check(tmp_path: Path) -> None:
    path = write_config(tmp_path / "enc.yaml", rule(["secrets"], {"secretbox": keys("b")}))
    enc = EncryptionAtRest(path, False, Clock())
    assert enc.health_checks() == []
    enc.start()
    enc.stop()


def test_a_value_under_a_key_not_loaded_yet_reloads_the_file_at_once(tmp_path: Path) -> None:
    """Under --workers, a sibling that polled first writes with the rotated file's new
    key: a read that does not decrypt looks at the file now instead of failing until
    this process's own poll (on the reactor's thread; the writer's never reloads)."""
    clock = Clock()
    first = keys("one")
    path = write_config(tmp_path / "enc.yaml", rule(["secrets"], {"aescbc": first}))
    here = EncryptionAtRest(path, True, clock)
    both = {"keys": keys("two")["keys"] + first["keys"]}
    write_config(tmp_path / "enc.yaml", rule(["secrets"], {"aescbc": both}))
    sibling = EncryptionAtRest(path, True, Clock())
    rotated = sibling.to_storage(KEY, DATA)
    assert rotated.startswith(b"k8s:enc:aescbc:v1:two:")
    failures: list[BaseException] = []

    def from_another_thread() -> None:
        try:
            here.from_storage(KEY, rotated)
        except TransformError as e:
            failures.append(e)

    thread = threading.Thread(target=from_another_thread)
    thread.start()
    thread.join()
    assert len(failures) == 1  # the writer thread does not reload
    assert here.from_storage(KEY, rotated) == (DATA, False)  # no poll has run
    assert here.to_storage(KEY, DATA).startswith(b"k8s:enc:aescbc:v1:two:")
    with pytest.raises(TransformError):  # a value no key opens still fails, once checked
        here.from_storage(KEY, b"k8s:enc:aescbc:v1:gone:" + rotated[23:])
    here.stop()
    sibling.stop()
