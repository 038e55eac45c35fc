"""What the server's tools, resources and prompt read: the AppContext (catalogue, agents, runs database),
opened once per server and shared by its sessions through SharedApp. Its own module so that app.py (the
factory and transports) imports tools.py and resources.py, and they import this, without a circle."""

import logging
import os
import sys
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio

from tender.answers.provenance import RunCatalogues
from tender.answers.runs import Store, StoredRun, open_runs
from tender.catalog import Catalog, CatalogError, TenderError
from tender.catalog.database import file_identity
from tender.settings import Settings

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
    # The catalogue file as opened (device, inode): a rebuild installs a new file, which this server does not read.
    catalog_identity: tuple[int, int] | None = None
    # Offline agent runs at once; the rest queue. They are CPU-bound and share the GIL: more at once than
    # cores makes every run slower (20 at once on 2 cores gave a fifth of the throughput of 2 at once).
    workers: int = field(default_factory=lambda: max(1, os.cpu_count() or 1))
    # Runs with an LLM role at once: they mostly wait on the endpoint.
    llm_workers: int = 16
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _limiters: dict = field(default_factory=dict)
    _run_catalogues: RunCatalogues | None = None
    _told_rebuilt: bool = False

    @classmethod
    def open(cls, settings: Settings) -> "AppContext":
        """Open the catalogue with its embedder, warm the agents up and open the runs database (blocking)."""
        runs = open_runs(settings.runs_location)  # one that cannot be opened: no history, said once in the log
        try:
            catalog = Catalog(settings.catalog_path, embedder=settings.embedder(catalog=settings.catalog_path))
        except CatalogError as error:
            log.warning("%s The server starts anyway; its tools will say so.", error)
            return cls(settings=settings, runs=runs, missing=error)
        app = cls(settings=settings, runs=runs, catalog=catalog, catalog_identity=file_identity(catalog.path))
        app.tender().warm_up()
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
        """The catalogue a stored run was made on: the one served, or another opened read-only; None for a run
        that recorded none. RunCatalogGone or RunCatalogChanged when it is no longer what the run saw."""
        with self._lock:
            if self._run_catalogues is None:
                self._run_catalogues = RunCatalogues(current=self.catalog)
        return self._run_catalogues.for_run(entry.run.plan.run_id, entry.catalog)

    def rebuilt(self) -> str | None:
        """A note when the catalogue file was rebuilt (or replaced) since this server opened it: the server goes on
        answering from the catalogue it holds in memory, the one it opened, until it is restarted. Logged once."""
        if self.catalog is None or self.catalog_identity is None:
            return None
        if file_identity(self.catalog.path) == self.catalog_identity:
            return None
        note = (
            f"The catalogue {self.catalog.path} was rebuilt after this server opened it; this answer comes from the "
            f"one it opened (built {self.catalog.meta.get('built_at', 'earlier')}). Restart the server to use the new one."
        )
        with self._lock:
            if not self._told_rebuilt:
                self._told_rebuilt = True
                log.warning("%s", note)
        return note

    def require_catalog(self) -> Catalog:
        if self.catalog is None:
            raise self.missing or CatalogError("No API catalogue is open. Build it with `tender catalog build`.")
        return self.catalog

    def tender(self, manager: str = "offline", contractors: str = "offline"):
        """The agents for this pair of reasoner backends, built on first use and kept."""
        from tender.agents.service import Tender

        catalog = self.require_catalog()
        with self._lock:
            if (manager, contractors) not in self.tenders:
                tender = Tender(catalog, **self._reasoners(catalog, manager, contractors))
                self.tenders[manager, contractors] = tender
            return self.tenders[manager, contractors]

    def _reasoners(self, catalog: Catalog, manager: str, contractors: str) -> dict:
        from tender.agents.reasoners.factory import build_reasoners, llm_settings
        from tender.agents.service import ranking_model

        built = build_reasoners(manager, contractors, llm_settings(self.settings))
        scorer = ranking_model(self.settings.ranking_model_path, catalog.embedder)
        return {"manager": built[0], "contractors": built[1], "scorer": scorer}

    def close(self) -> None:
        if self._run_catalogues is not None:
            self._run_catalogues.close()
        if self.catalog is not None:
            self.catalog.close()
        self.runs.close()


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


def one_thread_each() -> None:
    """Concurrency comes from serving runs side by side, one core each. Math libraries' own threads on
    top oversubscribe the cores: torch's OpenMP spin-waits made an encode 14x slower on a busy 2-core
    machine, and numpy's BLAS threads doubled the CPU time of a run (135 ms to 72 ms once limited)."""
    from threadpoolctl import threadpool_limits

    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
    threadpool_limits(1)  # kept for the life of the process
