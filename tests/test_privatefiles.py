"""The data directory's parts are the server user's alone."""

from __future__ import annotations

import os
from pathlib import Path

import lmdb

from platform_api.privatefiles import private_dir, private_file
from platform_api.storage.lmdb_store import open_environment


def mode(path: Path) -> int:
    return os.stat(path).st_mode & 0o777


def test_a_directory_is_made_private_and_one_of_ours_is_closed(tmp_path: Path) -> None:
    made = tmp_path / "new" / "inner"
    private_dir(str(made))
    assert (mode(made), mode(tmp_path / "new")) == (0o700, 0o755)  # parents as umask has them
    ours = tmp_path / "run"
    ours.mkdir(mode=0o755)
    private_dir(str(ours))
    assert mode(ours) == 0o700


def test_a_directory_the_user_named_is_left_as_they_made_it(tmp_path: Path) -> None:
    named = tmp_path / "data"
    named.mkdir(mode=0o755)
    private_dir(str(named), ours=False)
    assert mode(named) == 0o755


def test_a_file_made_open_is_closed(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x")
    path.chmod(0o644)
    private_file(str(path))
    assert mode(path) == 0o600
    private_file(str(tmp_path / "missing"))  # nothing to close


def test_the_database_is_made_private_and_an_older_open_one_is_closed(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh"
    open_environment(str(fresh), 1 << 20).close()
    assert [mode(p) for p in (fresh, fresh / "data.mdb", fresh / "lock.mdb")] == [
        0o700,
        0o600,
        0o600,
    ]
    older = tmp_path / "older"
    lmdb.open(str(older), mode=0o644, subdir=True).close()  # as releases before made it
    older.chmod(0o755)
    open_environment(str(older), 1 << 20).close()
    assert [mode(p) for p in (older, older / "data.mdb", older / "lock.mdb")] == [
        0o700,
        0o600,
        0o600,
    ]
