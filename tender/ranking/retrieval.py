"""A function's candidates from the whole catalogue, each with its evidence and its score.

Candidates come from three rankings fused by reciprocal rank: the items whose texts are nearest to the function
(the encoder), those that share its words (BM25), and, where the catalogue has usage history, those the nearest
past mashups used. Items the requirement names are always in. Then every candidate gets its Evidence and the
scorer's probability that it serves the function."""

import threading
from bisect import bisect_left
from collections import OrderedDict, defaultdict
from collections.abc import Iterable
from typing import NamedTuple

import numpy as np
from pydantic import BaseModel, ConfigDict

from tender.catalog import Catalog
from tender.catalog.build import MAX_EMBEDDED_CHARS
from tender.catalog.servers import routes_of

from .evidence import HIGH, Evidence
from .judge import KINDS as JUDGED_KINDS
from .judge import Judge
from .lexical import query_terms
from .names import NameIndex, common_words, service_name
from .policy import Eligibility
from .reader import Reader
from .scorer import Scorer
from .vectors import QueryEncoder

DEPTH = 50  # candidates a function keeps, and how deep each ranking is read
RRF_K = 60  # reciprocal-rank fusion's constant (Cormack et al., 2009)
# Past mashups that vote for the APIs they used, weighted exp((similarity - nearest) / TEMPERATURE).
NEIGHBOURS = 20
TEMPERATURE = 0.1


class Candidate(BaseModel):
    model_config = ConfigDict(frozen=True)

    item: int
    score: float  # the probability that the item serves the function
    evidence: Evidence


class Shortlist(BaseModel):
    """A function's candidates, best first."""

    model_config = ConfigDict(frozen=True)

    function: str
    candidates: tuple[Candidate, ...]

    def best(self, n: int = 1) -> tuple[Candidate, ...]:
        return self.candidates[:n]

    def get(self, item: int) -> Candidate | None:
        return next((c for c in self.candidates if c.item == item), None)


class Read(NamedTuple):
    """A pool's similarities to a function, in pool order, and what they are compared with: `among`, the
    similarities a candidate's rank and gap are read against (the whole catalogue's, or the pool's)."""

    dense: np.ndarray
    names: np.ndarray
    requirement: np.ndarray
    context: np.ndarray | None
    among: np.ndarray
    best_name: float = 0.0
    best_context: float = 0.0


class Ranker:
    """Scores a catalogue's items for a function. Safe to share between threads."""

    def __init__(
        self,
        catalog: Catalog,
        encoder: QueryEncoder,
        scorer: Scorer,
        reader: Reader | None = None,
        judge: Judge | None = None,
    ):
        self.catalog = catalog
        self.encoder = encoder
        self.scorer = scorer
        self.reader = reader  # a strong encoder that reads the shortlist (reader.py); the scorer is fitted on it
        self._items = catalog.vectors("api")
        self._names = catalog.vectors("name")
        self._dense, self._name_dense = catalog.dense_search("api"), catalog.dense_search("name")
        self._ids = np.array(self._items.ids, dtype=np.int64)
        self._deprecated = {a.id for a in catalog.apis() if a.gone}
        self._uninstallable = {a.id for a in catalog.apis() if a.kind == "server" and not routes_of(a.details)}
        self.eligibility = Eligibility(catalog.apis(), self._ids)
        self._high = scorer.high_for(catalog.source_kinds())
        # A tool of a server the catalogue lists as an item is a way to that server: its match is the server's.
        servers = {a.provider: a.id for a in catalog.apis() if a.kind == "server"}
        self._server_of = {
            a.id: servers[str(a.details.get("of_server"))]
            for a in catalog.apis()
            if a.kind == "tool" and str(a.details.get("of_server") or "") in servers
        }
        self._tool_names = {a.id: a.tool for a in catalog.apis() if a.id in self._server_of}
        mashups = catalog.vectors("mashup")
        self._mashups = mashups
        self._used_by: list[list[int]] = [catalog.get_mashup(int(m)).api_ids for m in mashups.ids]
        self.has_history = bool(len(mashups.ids))
        # The matcher's judgement of what a plan would award (judge.py): only in a catalogue that holds MCP servers
        # and has no usage history (past apps' use of items together is evidence the judge cannot see).
        self.judge = judge if servers and not self.has_history else None
        self._uses = catalog.usage_counts()
        apis = catalog.apis()
        called = [
            (a.id, service_name(str(a.details.get("title") or a.name)) if a.kind == "server" else a.name) for a in apis
        ]
        self._named = NameIndex(called, common_words([a.description for a in apis]))
        self._lock = threading.Lock()
        self._requirement_votes: OrderedDict[str, dict[int, float]] = OrderedDict()

    def prepare(self, requirement: str, texts: list[str]) -> None:
        """Embed a run's requirement and its functions' texts at once (vectors.QueryEncoder.read), with the reader
        too where there is one."""
        self.encoder.read(requirement, texts)
        if self.reader is not None:
            self.reader.queries.read(requirement, texts)

    @property
    def mixed_forms(self) -> bool:
        """Whether the catalogue holds MCP servers and web APIs alike (where a need's form chooses between them)."""
        return self.eligibility.mixed

    def shortlist(
        self,
        function: str,
        requirement: str,
        exclude: Iterable[int] = (),
        depth: int = DEPTH,
        among: Iterable[int] | None = None,
        form: str | None = None,
        include_unfit: bool = False,
    ) -> Shortlist:
        """The function's candidates (its words read alone, and where they stand in the requirement), best first,
        `exclude` left out and only items of the need's `form` where the catalogue holds both (policy.py); with
        `among`, only those items (the items of a required category, say), however far down they rank. A tool of a
        server the catalogue lists is its server's candidate: the server, with the tool's evidence."""
        vectors = self.encoder.embed([function, requirement])
        f_vector, r_vector = vectors[0], vectors[1]
        excluded = set(exclude)
        eligible = self.eligibility
        fits = eligible.mask(form, include_unfit)
        folding = bool(self._server_of)
        depth_read = depth * 2 if folding else depth  # tools fold into their servers: read deeper
        # Exact below 50,000 items; above, an approximate index and exact scores for what it finds (catalog/ann.py).
        dense = self._dense.similarities(f_vector)
        allowed = ~np.isin(self._ids, list(excluded)) if excluded else np.ones(len(self._ids), dtype=bool)
        allowed &= fits
        dense_order = self._dense.nearest(dense, allowed, depth_read)

        def wanted(item: int) -> bool:
            return item not in excluded and eligible.allows(item, form, include_unfit)

        over = len(excluded) + (depth_read * 3 if not fits.all() else 0)
        lexical_of = self.catalog.lexical_scorer(query_terms(function))
        lexical = [h for h in lexical_of(depth_read + over, None) if wanted(int(h.id))]
        history = self._votes(f_vector) if self.has_history else {}
        history_requirement = self._requirement_history(requirement, r_vector) if self.has_history else {}
        row = self._items.row
        rankings = [
            [int(self._ids[r]) for r in dense_order],
            [int(h.id) for h in lexical[:depth_read]],
            [a for a in sorted(history, key=lambda a: -history[a]) if wanted(a)][:depth_read],
        ]
        fused: dict[int, float] = defaultdict(float)
        for ranking in rankings:
            for rank, item in enumerate(ranking, start=1):
                if wanted(item) and item in row:
                    fused[item] += 1 / (RRF_K + rank)
        if folding:  # a server whose tools are found is read as well as they are
            for item in [i for i in fused if i in self._server_of]:
                server = self._server_of[item]
                if wanted(server) and server in row:
                    fused[server] = max(fused.get(server, 0.0), fused[item])
        # An item the requirement names is always a candidate, beside the search's: ten servers of one named service
        # ("Google Calendar MCP", ...) must not crowd out what the search found for the function.
        naming = self._naming(function, requirement)
        named = [a for a in naming if wanted(a) and a in row]
        pool = sorted(fused, key=lambda a: (-fused[a], a))[:depth_read]
        searched = set(pool)
        pool += [a for a in named if a not in searched][:depth_read]
        if among is not None:
            inside = [a for a in among if a in row and wanted(a)]
            first = set(named)
            pool = sorted(inside, key=lambda a: (a not in first, -fused.get(a, 0.0), -float(dense[row[a]]), a))
            pool = pool[:depth_read]
        bm25 = {int(h.id): h.score for h in lexical}
        missing = [a for a in pool if a not in bm25]
        if missing:  # BM25 of candidates beyond the lexical ranking's depth
            bm25.update({int(h.id): h.score for h in lexical_of(len(missing), missing)})
        best_bm25 = max(bm25.values(), default=0.0)
        below = sorted(-s for s in bm25.values())  # a score's lexical rank: 1 + how many score more (bisect)
        if self.reader is not None:
            read = self._read(function, requirement, pool)
        else:
            read = self._read_catalogue(function, requirement, f_vector, r_vector, dense, allowed, pool)
        best_dense = float(read.among.max()) if len(read.among) else 0.0
        candidates = []
        for i, item in enumerate(pool):
            score_lex = bm25.get(item, 0.0)
            similarity, context, name = float(read.dense[i]), read.context, float(read.names[i])
            evidence = Evidence(
                dense=round(similarity, 6),
                dense_gap=round(similarity - best_dense, 6),
                dense_rank=int((read.among > similarity).sum()) + 1,
                dense_requirement=round(float(read.requirement[i]), 6),
                dense_context=round(float(context[i]), 6) if context is not None else None,
                dense_context_gap=round(float(context[i]) - read.best_context, 6) if context is not None else None,
                name=round(name, 6),
                name_gap=round(name - read.best_name, 6),
                lexical=round(score_lex / best_bm25, 6) if best_bm25 > 0 else 0.0,
                lexical_rank=bisect_left(below, -score_lex) + 1 if score_lex > 0 else 0,
                history=round(history.get(item, 0.0), 6),
                history_requirement=round(history_requirement.get(item, 0.0), 6),
                uses=self._uses.get(item, 0),
                catalogue_history=self.has_history,
                named=naming.get(item, 0.0),
                deprecated=item in self._deprecated,
                uninstallable=item in self._uninstallable,
                high=self._high,
            )
            candidates.append((item, evidence))
        scores = [round(float(p), 4) for p in self.scorer.probabilities([e for _, e in candidates])]
        # Ordered by the score as reported, ties by id: the last bits of a similarity differ between exact and
        # approximate search, and must not reorder candidates that score alike.
        ranked = sorted(zip(candidates, scores), key=lambda pair: (-pair[1], pair[0][0]))
        found = (
            self._folded(ranked, depth)
            if folding
            else [Candidate(item=item, score=p, evidence=e) for (item, e), p in ranked[:depth]]
        )
        return Shortlist(function=function, candidates=tuple(found))

    def refused(self, awards: list[tuple[str, int, float, Evidence]]) -> list[float | None]:
        """For each (need, item, score, evidence) about to be awarded or named: the judge's similarity of the need
        and the item's own text where it finds the item does not serve the need, else None. Put to it only: a
        doubtful award (below HIGH, "likely" where the ranking is calibrated; docs/tuning.md measured the higher bar
        the words keep on kinds it never saw, and no interval supported it) of a whole service (judge.KINDS) the
        need does not name, in a catalogue that holds MCP servers and has no usage history (past apps' use of
        items together is evidence the judge cannot see). A server is read by its own text (title, description,
        tools' names), not by one tool's, which let near misses through ("get_zpa_enrollment_certificate" of
        Zscaler for booking a dentist on Zocdoc)."""
        judge = self.judge
        if judge is None:
            return [None] * len(awards)
        asked = [
            (need, item, api.text()[:MAX_EMBEDDED_CHARS])
            for need, item, score, evidence in awards
            if score < HIGH and evidence.named <= 0 and (api := self.catalog.get_api(item)).kind in JUDGED_KINDS
        ]
        said = dict(zip([(n, i) for n, i, _ in asked], judge.similarities(asked))) if asked else {}
        out: list[float | None] = []
        for need, item, _, _ in awards:
            similarity = said.get((need, item))
            out.append(similarity if similarity is not None and similarity < judge.floor else None)
        return out

    def _naming(self, function: str, requirement: str) -> dict[int, float]:
        """The items the requirement names that are named for this function: those its own words name as well
        ("create tasks in Todoist": not Google Calendar, named for another need), else all of them ("post it
        there" in "share my runs on Twitter, post it there"). Never one only the function's words name: a need
        "search courses" does not name a tool called "search" that the request never mentions."""
        in_requirement = self._named.named(requirement)
        own = {item: m for item, m in self._named.named(function).items() if item in in_requirement}
        return own or in_requirement

    def _folded(self, ranked: list[tuple[tuple[int, Evidence], float]], depth: int) -> list[Candidate]:
        """The `depth` best candidacies, each tool's read as its server's, where that is the better of the two (the
        server bid with the tool's evidence, naming it); best first, each server once."""
        out: dict[int, Candidate] = {}
        for (item, evidence), score in ranked:  # best first: the first a server meets is its best
            if len(out) == depth:  # later candidacies never displace earlier ones
                break
            server = self._server_of.get(item)
            if server is None:
                if item not in out:
                    out[item] = Candidate(item=item, score=score, evidence=evidence)
            elif server not in out:
                evidence = evidence.model_copy(
                    update={
                        "via_tool": self._tool_names.get(item, ""),
                        "uninstallable": server in self._uninstallable,
                    }
                )
                out[server] = Candidate(item=server, score=score, evidence=evidence)
        return list(out.values())

    def _read_catalogue(
        self,
        function: str,
        requirement: str,
        f_vector: np.ndarray,
        r_vector: np.ndarray,
        dense,
        allowed: np.ndarray,
        pool: list[int],
    ) -> "Read":
        """The pool's similarities by the catalogue's own vectors, compared with the whole catalogue's best."""
        rows = [self._items.row[item] for item in pool]
        names = self._name_dense.similarities(f_vector) if len(self._names.ids) == len(self._ids) else dense
        c_vector = self.encoder.in_context(function, requirement)
        in_context = self._dense.similarities(c_vector) if c_vector is not None else None
        # Row by row: above 50,000 items the similarities are an index's answer (ann.Similarities), exact per row.
        return Read(
            dense=np.array([float(dense[r]) for r in rows]),
            names=np.array([float(names[r]) for r in rows]),
            requirement=self._items.matrix[rows] @ r_vector,
            context=np.array([float(in_context[r]) for r in rows]) if in_context is not None else None,
            among=np.asarray(dense[allowed] if allowed.any() else dense),
            best_name=float(names[allowed].max()) if allowed.any() else 0.0,
            best_context=float(in_context[allowed].max()) if in_context is not None and allowed.any() else 0.0,
        )

    def _read(self, function: str, requirement: str, pool: list[int]) -> "Read":
        """The pool's similarities by the reader, compared with the pool's best rather than the catalogue's."""
        assert self.reader is not None
        if not pool:
            return Read(dense=np.zeros(0), names=np.zeros(0), requirement=np.zeros(0), context=None, among=np.zeros(0))
        queries = self.reader.queries
        f_vector, r_vector = queries.embed([function, requirement])
        c_vector = queries.in_context(function, requirement)
        documents = self.reader.items(self.catalog, "api", pool)
        named = self.reader.items(self.catalog, "name", pool)
        dense, names = documents @ f_vector, named @ f_vector
        context = documents @ c_vector if c_vector is not None else None
        return Read(
            dense=dense,
            names=names,
            requirement=documents @ r_vector,
            context=context,
            among=dense,
            best_name=float(names.max()),
            best_context=float(context.max()) if context is not None else 0.0,
        )

    def _requirement_history(self, requirement: str, vector: np.ndarray) -> dict[int, float]:
        """The requirement's votes, the same for each of its needs: made once for the runs in flight."""
        key = QueryEncoder.key(requirement)
        with self._lock:
            votes = self._requirement_votes.get(key)
        if votes is None:
            votes = self._votes(vector)
            with self._lock:
                self._requirement_votes[key] = votes
                while len(self._requirement_votes) > 16:
                    self._requirement_votes.popitem(last=False)
        return votes

    def _votes(self, vector: np.ndarray) -> dict[int, float]:
        """Per API, its share of the weight of the past mashups nearest to the vector."""
        sims = self._mashups.matrix @ vector
        k = min(NEIGHBOURS, len(sims))
        top = np.argpartition(-sims, k - 1)[:k]
        nearest = float(sims[top].max())
        weights = np.exp((sims[top] - nearest) / TEMPERATURE)
        total = float(weights.sum()) or 1.0
        votes: dict[int, float] = defaultdict(float)
        for row, weight in zip(top, weights):
            for api in self._used_by[row]:
                votes[api] += float(weight) / total
        return votes
