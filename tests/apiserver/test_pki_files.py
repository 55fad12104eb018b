"""Files the embedded PKI writes: replaced atomically, even by several workers at once."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import yaml

from platform_api.apiserver import pki


def test_workers_writing_the_admin_kubeconfig_together_never_fail(tmp_path: Path) -> None:
    paths = pki.ensure_pki(str(tmp_path / "pki"), "127.0.0.1")
    target = str(tmp_path / "admin.kubeconfig")
    failures: list[BaseException] = []

    def write(server: str) -> None:
        try:
            for _ in range(50):
                pki.write_admin_kubeconfig(target, server, paths)
        except BaseException as e:
            failures.append(e)

    writers = [threading.Thread(target=write, args=(f"https://127.0.0.1:{p}",)) for p in (1, 2)]
    for w in writers:
        w.start()
    for w in writers:
        w.join()
    assert failures == []
    config = yaml.safe_load(Path(target).read_text())
    assert config["clusters"][0]["cluster"]["server"] in (
        "https://127.0.0.1:1",
        "https://127.0.0.1:2",
    )
    assert os.stat(target).st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".tmp-")] == []
