"""An etcd endpoint as ``--etcd-servers`` names it (``http://host:port``, ``https://...``,
or a bare ``host:port``), checked once where the flag is read: a typo is a flag error
rather than a traceback or a twenty-second wait at start.  Imports nothing of the client,
so the flags are checked without loading it."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

SCHEMES = ("http", "https")
DEFAULT_PORT = 2379


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int

    @classmethod
    def parse(cls, endpoint: str) -> Target:
        """ValueError, saying why, for what no etcd client could dial."""
        parts = urlsplit(endpoint if "://" in endpoint else f"http://{endpoint}")
        if parts.scheme not in SCHEMES:
            raise ValueError(f'{endpoint}: unsupported scheme "{parts.scheme}" (http or https)')
        try:
            port = parts.port
        except ValueError as e:
            raise ValueError(f"{endpoint}: {e}") from None
        return cls(parts.scheme, parts.hostname or "127.0.0.1", port or DEFAULT_PORT)

    @property
    def authority(self) -> str:
        return f"{self.host}:{self.port}"
