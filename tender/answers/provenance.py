"""The catalogue a stored run is told with: the one it was made on, or none.

A run's ids mean something only in its own catalogue: explained with another one, tool 37 of an MCP catalogue
became ProgrammableWeb API 37, "used in 1 past mashup". So `tender explain`, explain_bids and the runs://
resource read the catalogue the run recorded, and refuse in one line when it is gone or was rebuilt into
something else since. A server that switched to a newly published catalogue (server/publication.py) keeps the ones
it served before open, and tells their runs with them. A run stored before runs recorded their catalogue is told
from its transcript alone."""

import threading
from pathlib import Path
from typing import Literal

from tender.catalog import Catalog, CatalogError
from tender.catalog.summary import summarise
from tender.errors import InputToFix

from .runs import CatalogRef

State = Literal["as recorded", "gone", "changed", "unrecorded"]
UNRECORDED = (
    "This run was stored before runs recorded their catalogue, so it is told from its transcript alone "
    "(no usage counts or descriptions from a catalogue)."
)


class RunCatalogGone(InputToFix):
    def __init__(self, run_id: str, ref: CatalogRef, moved: str = ""):
        super().__init__(
            f"Run {run_id} was made on the catalogue {ref.path}, which is gone; its ids name nothing in another "
            f"catalogue. {moved}Rebuild it there from the same sources, or make the run anew."
        )


class RunCatalogChanged(InputToFix):
    def __init__(self, run_id: str, ref: CatalogRef, now: str):
        super().__init__(
            f"Run {run_id} was made on the catalogue {ref.path} as it was then (fingerprint {ref.fingerprint}); it "
            f"has been rebuilt with other items since (now {now}), so the run's ids may name other APIs. Make the "
            "run anew on it, or rebuild the catalogue from the run's sources."
        )


def state_of(ref: CatalogRef | None, where: Path | str | None = None) -> tuple[State, str | None]:
    """Whether the run's catalogue is still what it was (at `where`, if it moved), and its fingerprint now."""
    if ref is None:
        return "unrecorded", None
    try:
        now = summarise(where or ref.path).fingerprint
    except CatalogError:  # missing, or no longer a catalogue
        return "gone", None
    return ("as recorded" if now == ref.fingerprint else "changed"), now


def check(run_id: str, ref: CatalogRef | None, where: Path | str | None = None, moved: str = "") -> None:
    """Raise RunCatalogGone or RunCatalogChanged unless the run's catalogue is as it recorded (or unrecorded).
    `moved` says how to name the catalogue's new place, where the caller can."""
    state, now = state_of(ref, where)
    if state == "gone":
        assert ref is not None
        at = ref if where is None else CatalogRef(path=str(where), fingerprint=ref.fingerprint)
        raise RunCatalogGone(run_id, at, moved if where is None else "")
    if state == "changed":
        assert ref is not None and now is not None
        raise RunCatalogChanged(run_id, ref, now)


class RunCatalogues:
    """Opens the catalogues runs were made on, read-only and without an encoder (telling a run embeds nothing),
    and keeps the last few: a server explains runs of the catalogue it serves, and now and then of another."""

    def __init__(self, current: Catalog | None = None, keep: int = 2, moved: str = ""):
        self.current, self.keep, self.moved = current, keep, moved
        self._open: dict[tuple[str, str], Catalog] = {}
        self._served: dict[tuple[str, str], Catalog] = {}  # served before a publication (see switch)
        self._lock = threading.Lock()

    def for_run(self, run_id: str, ref: CatalogRef | None, where: Path | str | None = None) -> Catalog | None:
        """The run's catalogue (None for a run that recorded none); RunCatalogGone or RunCatalogChanged."""
        if ref is None and where is None:
            return None
        if ref is None:  # an old run, and the caller named the catalogue to read: theirs to vouch for
            return self._opened(str(where), "")
        current = self.current
        if where is None and current is not None and str(current.path.resolve()) == ref.path:
            if current.fingerprint == ref.fingerprint:
                return current
        if where is None:  # a catalogue this server served before a publication: its runs are told with it
            with self._lock:
                served = self._served.get((ref.path, ref.fingerprint))
            if served is not None:
                return served
        check(run_id, ref, where, self.moved)
        return self._opened(str(where or ref.path), ref.fingerprint)

    def switch(self, current: Catalog, previous: Catalog | None) -> None:
        """A server now serves `current` (published at the same path); the last `keep` catalogues it served before
        stay open, so that the runs made on them are told with them after their file was replaced."""
        with self._lock:
            self.current = current
            if previous is not None:
                self._keep(self._served, (str(previous.path.resolve()), previous.fingerprint), previous)

    def _keep(self, kept: dict, key: tuple[str, str], catalog: Catalog) -> None:
        while len(kept) >= self.keep:  # the oldest goes; a thread still reading it keeps its data
            kept.pop(next(iter(kept)))
        kept[key] = catalog

    def _opened(self, path: str, fingerprint: str) -> Catalog:
        key = (str(Path(path).resolve()), fingerprint)
        with self._lock:
            if key not in self._open:
                self._keep(self._open, key, Catalog(path))
            return self._open[key]

    def close(self) -> None:
        with self._lock:
            for catalog in [*self._open.values(), *self._served.values()]:
                catalog.close()
            self._open.clear()
            self._served.clear()
