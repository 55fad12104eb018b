"""Directories and files only the server's user may read: the data directory holds every
object (Secrets among them, in clear unless encryption at rest is on), keys, locks and the
workers' metrics.  etcd keeps its data directory 0700 for the same reason."""

from __future__ import annotations

import os

DIR_MODE, FILE_MODE = 0o700, 0o600


def private_dir(path: str, *, ours: bool = True) -> str:
    """``path`` as a directory its owner alone may enter: made so when missing (its parents
    as the umask has them); when it exists and is ``ours`` (a directory the server made
    inside the data directory, e.g. by a release that made it open), closed to others.
    A directory the user named (``--data-dir``) is left as they made it."""
    os.makedirs(path, mode=DIR_MODE, exist_ok=True)
    if ours and os.stat(path).st_mode & 0o077:
        os.chmod(path, DIR_MODE)
    return path


def private_file(path: str) -> None:
    """Close an existing file of the server's to others (made open by an earlier release)."""
    if os.path.exists(path) and os.stat(path).st_mode & 0o077:
        os.chmod(path, FILE_MODE)
