"""Names and readiness of CRDs: kube's naming-condition and establishing controllers.

A CRD's requested names become its ``status.acceptedNames`` unless another CRD of
the same group already accepted them (``NamesAccepted`` False with kube's reason);
once its names are accepted it becomes ``Established`` and its types are served.
The two steps are two status writes, as in kube, so watchers see both.
"""

from __future__ import annotations

import base64
from typing import Any

from cryptography import x509

from platform_api import errors
from platform_api.apiextensions import crd as crds
from platform_api.controllers.base import Controller
from platform_api.controllers.informer import ByNamespace
from platform_api.fieldmanager.manager import APISERVER
from platform_api.registry.store import Store
from platform_api.storage.interface import Event

Obj = dict[str, Any]


def _used_names(all_crds: list[Obj], group: str) -> tuple[set[str], set[str]]:
    """Resource names and kinds the CRDs of ``group`` have accepted."""
    resources: set[str] = set()
    kinds: set[str] = set()
    for other in all_crds:
        if other["spec"].get("group") != group:
            continue
        names = other.get("status", {}).get("acceptedNames") or {}
        resources.update(n for n in (names.get("plural"), names.get("singular")) if n)
        resources.update(names.get("shortNames") or ())
        kinds.update(n for n in (names.get("kind"), names.get("listKind")) if n)
    return resources, kinds


def _conflict(requested: str, accepted: str, used: set[str]) -> str | None:
    if requested == accepted or requested not in used:
        return None
    return f'"{requested}" is already in use'


def calculate_names(crd: Obj, all_crds: list[Obj]) -> tuple[Obj, Obj, Obj]:
    """kube's ``calculateNamesAndConditions``: new accepted names, the NamesAccepted and
    the Established conditions (each ``{status, reason, message}``)."""
    resources, kinds = _used_names(all_crds, crd["spec"]["group"])
    requested = crd["spec"]["names"]
    accepted = crd.get("status", {}).get("acceptedNames") or {}
    names = dict(accepted)
    failure: tuple[str, str] | None = None
    for key, reason, used in (
        ("plural", "PluralConflict", resources),
        ("singular", "SingularConflict", resources),
    ):
        problem = _conflict(requested.get(key, ""), accepted.get(key, ""), used)
        if problem:
            failure = (reason, problem)
        else:
            names[key] = requested.get(key, "")
    wanted_short = requested.get("shortNames") or []
    if wanted_short != (accepted.get("shortNames") or []):
        have = set(accepted.get("shortNames") or ())
        found = [_conflict(name, "", resources) for name in wanted_short if name not in have]
        problems = [p for p in found if p]
        if problems:
            text = problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"
            failure = ("ShortNamesConflict", text)
        else:
            names["shortNames"] = wanted_short
    for key, reason in (("kind", "KindConflict"), ("listKind", "ListKindConflict")):
        problem = _conflict(requested.get(key, ""), accepted.get(key, ""), kinds)
        if problem:
            failure = (reason, problem)
        else:
            names[key] = requested.get(key, "")
    names["categories"] = requested.get("categories") or []
    if failure is None:
        named = {"status": "True", "reason": "NoConflicts", "message": "no conflicts found"}
    else:
        named = {"status": "False", "reason": failure[0], "message": failure[1]}
    established = crds.find_condition(crd, crds.ESTABLISHED) or {
        "status": "False",
        "reason": "NotAccepted",
        "message": "not all names are accepted",
    }
    if established.get("status") != "True" and named["status"] == "True":
        established = {
            "status": "False",
            "reason": "Installing",
            "message": "the initial names have been accepted",
        }
    return _go_names(names), named, established


def _go_names(names: Obj) -> Obj:
    """CustomResourceDefinitionNames as Go serializes it: field order, omitempty."""
    out: Obj = {}
    for key in ("plural", "singular", "shortNames", "kind", "listKind", "categories"):
        value = names.get(key)
        if value or key in ("plural", "kind"):
            out[key] = value or ""
    return out


class NamingController(Controller):
    """Accepts names, then establishes; re-checks the group's other CRDs on changes."""

    name = "crd-naming-and-establishing"
    queue = "crd_naming_condition_controller"
    manager = APISERVER  # kube runs it inside the API server

    def __init__(self, store: Store, *args: Any) -> None:
        super().__init__(*args)
        self.store = store
        self.prefix = store.prefix
        # kube's lister: every sync compares names with the group's other CRDs, and a
        # list from storage per sync decodes them all (quadratic in a busy group).
        self.index = ByNamespace(store)

    def _group(self, group: str) -> list[Obj]:
        return [c for c in self.index.in_namespace("") if c["spec"].get("group") == group]

    def _requeue_waiting(self, group: str) -> None:
        """A name let go may unblock the group's CRDs whose names are not all accepted
        (kube requeues the whole group; those accepted have nothing to gain)."""
        for other in self._group(group):
            if not crds.is_true(other, crds.NAMES_ACCEPTED):
                self.enqueue(other["metadata"]["name"])

    def resync(self) -> None:
        for crd in self.index.load():
            self.enqueue(crd["metadata"]["name"])

    def observe(self, event: Event) -> None:
        old, new = self.index.apply(event)
        if new is not None:
            self.enqueue(new["metadata"]["name"])
        elif old is not None:  # deleted: its names are free now
            self._requeue_waiting(old["spec"].get("group", ""))

    async def sync(self, name: str) -> float | None:
        try:
            crd = self.store.get("", name).object
        except errors.StatusError:
            return None
        # kube's gate: the accepted names, and the NamesAccepted condition too (a status
        # written without conditions gets them back).
        if await self._accept_names(crd):
            return None  # the status write brings it back here
        if crds.is_true(crd, crds.NAMES_ACCEPTED) and not crds.is_true(crd, crds.ESTABLISHED):
            await self._establish(name)
        return None

    async def _accept_names(self, crd: Obj) -> bool:
        """Write the accepted names and conditions; False when nothing changes."""
        # The names in use as stored now: own commits of this turn and other processes'
        # are taken in first (a CRD accepted a moment ago holds its names).
        self.hub.take_in()
        names, named, established = calculate_names(crd, self._group(crd["spec"]["group"]))
        current = crds.find_condition(crd, crds.NAMES_ACCEPTED)
        accepted = crd.get("status", {}).get("acceptedNames") or {}
        if names == accepted and crds.equivalent({"type": crds.NAMES_ACCEPTED, **named}, current):
            return False

        def update(existing: Obj | None) -> Obj:
            assert existing is not None
            existing.setdefault("status", {})["acceptedNames"] = names
            crds.set_condition(existing, crds.NAMES_ACCEPTED, **named)
            crds.set_condition(existing, crds.ESTABLISHED, **established)
            return existing

        if await self._write_status(crd["metadata"]["name"], update):
            self._requeue_waiting(crd["spec"]["group"])
        # else raced with another write: its event brings the CRD back
        return True

    async def _establish(self, name: str) -> None:
        def update(existing: Obj | None) -> Obj:
            assert existing is not None
            webhook = (existing["spec"].get("conversion") or {}).get("webhook") or {}
            if not _valid_ca_bundle(webhook.get("clientConfig") or {}):
                crds.set_condition(
                    existing,
                    crds.ESTABLISHED,
                    "False",
                    "InvalidCABundle",
                    "The conversion webhook CABundle is invalid",
                )
            else:
                crds.set_condition(
                    existing,
                    crds.ESTABLISHED,
                    "True",
                    "InitialNamesAccepted",
                    "the initial names have been accepted",
                )
            return existing

        await self._write_status(name, update)

    async def _write_status(self, name: str, update: Any) -> bool:
        try:
            await self.store.update("", name, update, subresource="status")
        except errors.StatusError as e:
            if e.code in (404, 409):
                return False  # gone or changed meanwhile: its next event brings it back
            raise
        return True


def _valid_ca_bundle(client_config: Obj) -> bool:
    """kube's ``ValidateCABundle``: a set caBundle must hold at least one PEM certificate."""
    bundle = client_config.get("caBundle")
    if not bundle:
        return True
    try:
        return bool(x509.load_pem_x509_certificates(base64.b64decode(bundle)))
    except ValueError:
        return False
