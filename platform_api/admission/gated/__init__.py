"""kube's plugins that act only on what this server does not serve, as kube behaves with
their feature gates at v1.36's defaults: each is built, accepts every request, and says
in its docstring why (the PLUGINS table maps each name to its own module here)."""

from __future__ import annotations

from typing import Any


class Inert:
    """A plugin with nothing to check here: kube's with its gate off."""

    name = ""
    resources = frozenset[tuple[str, str]]()  # acts on nothing served here

    def validate(self, attrs: Any, obj: Any, old: Any) -> None:
        return None
