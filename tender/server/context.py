"""What the server's tools, resources and prompt read: the AppContext (catalogue, agents, runs database),
opened once per server and shared by its sessions through SharedApp. Its own module so that app.py (the
factory and transports) imports tools.py and resources.py, and they import this, without a circle."""

import logging
import os
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from tender.agents.local_model import TextModel
from tender.answers.provenance import RunCatalogues
from tender.answers.runs import Store, StoredRun
from tender.answers.stores import open_runs
from tender.catalog import Catalog, CatalogError, TenderError
from tender.settings import Settings

from .publication import Publication, file_version
from tender.assembly import assemble, embedder_for, one_thread_each, reader_for, text_model_for

log = logging.getLogger("tender.server")


@dataclass
class AppContext:
    """What every tool reads: opened once per server. `catalog` is None when there is no catalogue,
    and `missing` then says how to build one."""

    settings: Settings
    runs: Store
    catalog: Catalog | None = None
    missing: TenderError | None = None
    tenders: dict = field(default_factory=dict)  # (manager backend, contractor backend) -> Tender, built on first use
    # The catalogue file as opened (device, inode): a rebuild installs a new file, which the server opens in the
    # background and switches to between requests (publication.py).
    catalog_identity: tuple[int, int, int, int] | None = None  # its version (publication.file_version)
    # Offline agent runs at once; the rest queue. They are CPU-bound and share the GIL: more at once than
    # cores makes every run slower (20 at once on 2 cores gave a fifth of the throughput of 2 at once).
    workers: int = field(default_factory=lambda: max(1, os.cpu_count() or 1))
    # Runs with an LLM role at once: they mostly wait on the endpoint.
    llm_workers: int = 16
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _limiters: dict = field(default_factory=dict)
    _run_catalogues: RunCatalogues | None = None
    _publication: Publication | None = None
    _told: set = field(default_factory=set)  # the notes on a publication already logged
    # Why TENDER_READER_MODEL is not used (it names no model that can be loaded): the server reads without the
    # reader, and every plan says so, until it is fixed and the server restarted.
    reader_off: str | None = None
    # The language model that reads requests (TENDER_REQUEST_MODEL, or the pulled one), loaded once at start; None:
    # rules read them. Where it cannot be loaded, `request_model_off` says why on every plan read without it.
    text_model: TextModel | None = None
    request_model_off: str | None = None

    @classmethod
    def open(cls, settings: Settings) -> "AppContext":
        """Open the catalogue with its embedder, warm the agents up and open the runs database (blocking)."""
        runs = open_runs(settings.runs_location)  # one that cannot be opened: no history, said once in the log
        try:
            catalog = Catalog(
                settings.catalog_path, embedder=embedder_for(settings, catalog=settings.catalog_path), held=True
            )
        except CatalogError as error:
            log.warning("%s The server starts anyway; its tools will say so.", error)
            return cls(settings=settings, runs=runs, missing=error)
        identity = file_version(catalog.path)
        app = cls(settings=settings, runs=runs, catalog=catalog, catalog_identity=identity)
        app.reader_off = reader_problem(settings)
        app.text_model, app.request_model_off = request_reader(settings)
        app.tender().warm_up()
        app._publication = Publication(catalog.path, identity, app._load)
        one_thread_each()
        log.info(
            "Serving %s (%s APIs, model %s); runs in %s",
            catalog.path,
            len(catalog.api_ids()),
            catalog.model_name,
            runs.path,
        )
        return app

    def limiter(self, manager: str = "offline", contractors: str = "offline") -> anyio.CapacityLimiter:
        """Admits `workers` offline runs at once, or `llm_workers` runs with an LLM role. Made on first use,
        in the event loop (anyio needs one); only the event loop's thread calls this."""
        offline = manager == contractors == "offline"
        if offline not in self._limiters:
            self._limiters[offline] = anyio.CapacityLimiter(self.workers if offline else self.llm_workers)
        return self._limiters[offline]

    def catalogue_of(self, entry: StoredRun) -> Catalog | None:
        """The catalogue a stored run was made on: the one served, or another opened read-only (one served before a
        publication among them); None for a run that recorded none. RunCatalogGone or RunCatalogChanged when it is
        no longer what the run saw."""
        self.switch_if_published()
        with self._lock:
            if self._run_catalogues is None:
                self._run_catalogues = RunCatalogues(current=self.catalog)
            run_catalogues = self._run_catalogues
        return run_catalogues.for_run(entry.run.plan.run_id, entry.catalog)

    def switch_if_published(self) -> None:
        """Between requests: serve the catalogue published at the path since, once it is open and warmed up. A
        request in flight keeps the catalogue and agents it took; the old catalogue stays open to explain its runs."""
        if self._publication is None:
            return
        ready = self._publication.poll()
        if ready is None:
            return
        identity, (catalog, tender) = ready
        with self._lock:
            old = self.catalog
            self.catalog, self.catalog_identity = catalog, identity
            self.tenders = {("offline", "offline"): tender}
            if self._run_catalogues is None:
                self._run_catalogues = RunCatalogues(current=catalog)
            self._run_catalogues.switch(catalog, old)
        log.info(
            "Serving the catalogue published at %s (%s APIs, built %s, fingerprint %s)",
            catalog.path,
            len(catalog.api_ids()),
            catalog.meta.get("built_at", "?"),
            catalog.fingerprint,
        )

    def _load(self, path: Path) -> tuple[Catalog, object]:
        """A published catalogue, opened with the embedder already loaded, and its offline agents warmed up."""

        embedder = self.catalog.embedder if self.catalog is not None else embedder_for(self.settings, catalog=path)
        catalog = Catalog(path, embedder=embedder, held=True)
        tender = self._assembled(catalog, "offline", "offline")
        tender.warm_up()
        return catalog, tender

    def rebuilt(self, catalog: Catalog | None = None) -> str | None:
        """A note when the answer comes from another catalogue than the one now published at the path: a new build
        being opened, one that cannot be served, or one switched to while the request ran (on `catalog`, the one it
        started with). Logged once each."""
        catalog = catalog or self.catalog
        if catalog is None:
            return None
        built = f"built {catalog.meta.get('built_at', 'earlier')}"
        publication = self._publication
        if catalog is not self.catalog:
            note = (
                f"The catalogue {catalog.path} was republished while this request ran; it was answered from the one it "
                f"started with ({built}), which its run_id still explains."
            )
        elif publication is None or not publication.pending():
            return None
        elif publication.failed and publication.failed[0] == file_version(catalog.path):
            note = (
                f"The catalogue {catalog.path} was replaced by a file this server cannot serve "
                f"({publication.failed[1]}); this answer comes from the one it had ({built})."
            )
        else:
            note = (
                f"The catalogue {catalog.path} was rebuilt; this server is opening the new one and answered from the "
                f"one it had ({built})."
            )
        with self._lock:
            if note not in self._told:
                self._told.add(note)
                log.warning("%s", note)
        return note

    def require_catalog(self) -> Catalog:
        self.switch_if_published()
        catalog = self.catalog
        if catalog is None:
            raise self.missing or CatalogError("No API catalogue is open. Build it with `tender catalog build`.")
        return catalog

    def tender(self, manager: str = "offline", contractors: str = "offline"):
        """The agents for this pair of reasoner backends on the catalogue served now, built on first use and kept.
        A request takes them once and reads its catalogue from them (`tender.catalog`), whatever is published
        while it runs."""

        self.require_catalog()
        with self._lock:
            catalog = self.catalog
            assert catalog is not None
            if (manager, contractors) not in self.tenders:
                tender = self._assembled(catalog, manager, contractors)
                self.tenders[manager, contractors] = tender
            return self.tenders[manager, contractors]

    def _assembled(self, catalog: Catalog, manager: str, contractors: str):
        # the server's reader and request model, each loaded once at start (or off, every plan saying why)
        reader = None if self.reader_off else reader_for(self.settings)
        return assemble(self.settings, catalog, manager, contractors, reader=reader, text_model=self.text_model)

    def close(self) -> None:
        if self._publication is not None:
            self._publication.wait(60, settle=False)  # a catalogue being opened is not left half-loaded at exit
        if self._run_catalogues is not None:
            self._run_catalogues.close()
        if self.catalog is not None:
            self.catalog.close()
        self.runs.close()


def reader_problem(settings: Settings) -> str | None:
    """Why the reader (TENDER_READER_MODEL) cannot be used (no model it can load, or no ranking model fitted on its
    vectors), said once in the log at start; None where it can, or none is set. A server is not refused for it: it
    serves as without the setting, each plan noting it."""
    from tender.ranking.choice import ranking_model

    try:
        reader = reader_for(settings)
        if reader is not None:  # and the ranking model fitted on its vectors, which scores what it reads
            ranking_model(settings.ranking_model_path, reader.embedder)
    except TenderError as error:
        log.warning(
            "%s The server starts without the reader: the catalogue's encoder reads each shortlist (every plan "
            "says so) until it is fixed and the server restarted.",
            error,
        )
        return f"This server's reader is off ({error}); the catalogue's encoder read this plan's shortlists."
    return None


def request_reader(settings: Settings) -> tuple[TextModel | None, str | None]:
    """(the model that reads requests, loaded and warmed up; why there is none where one was asked for). A server is
    not refused for a model it cannot load: rules read its requests, and every plan says why."""
    try:
        return text_model_for(settings), None
    except TenderError as error:
        log.warning("%s The server starts without it: rules read each request.", error)
        return None, f"This server's model that reads requests is off ({error}); rules read this request."


class SharedApp:
    """The AppContext behind one server, opened by the first lifespan and closed by the last.

    Tools reach it through the lifespan context; the static resource catalog://categories, which the
    SDK gives no context, reaches it here. Two in-memory clients of one server share it."""

    def __init__(self, open_app: Callable[[], AppContext]):
        self._open_app = open_app
        self._users = 0
        self._lock = anyio.Lock()
        self.app: AppContext | None = None

    @asynccontextmanager
    async def lifespan(self, _server) -> AsyncIterator[AppContext]:
        async with self._lock:
            if self.app is None:
                self.app = await anyio.to_thread.run_sync(self._open_app)
            self._users += 1
        try:
            yield self.app
        finally:
            async with self._lock:
                self._users -= 1
                if self._users == 0:
                    app, self.app = self.app, None
                    await anyio.to_thread.run_sync(app.close)

    def current(self) -> AppContext:
        if self.app is None:
            raise TenderError("The Tender server is still starting; try again in a moment.")
        return self.app
