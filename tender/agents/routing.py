"""Embedding routing: a call for proposals reaches only the top-N contractors whose profile (their API's
description and the mashups that used it) is closest to the task, within the announced categories. Contractors
holding a group (a category, a provider) rank by their best API.
Contractors named in the requirement are reached first. `broadcast` reaches every eligible contractor."""

import numpy as np

from tender.catalog import Catalog

from .contractor import api_contractor_id, category_contractor_id, provider_contractor_id
from .messages import CallForProposals, RoutedContractor, Routing
from .text import mentions, name_forms


class Router:
    def __init__(self, catalog: Catalog, organisation: str):
        self.catalog = catalog
        self.organisation = organisation
        apis = catalog.vectors("api")
        mashups = catalog.vectors("mashup")
        self.api_ids = np.array(apis.ids)
        self._api_matrix = apis.matrix
        self._mashup_matrix = mashups.matrix
        pairs = [
            (mashups.row[m.id], apis.row[a])
            for m in catalog.mashups()
            if m.id in mashups.row
            for a in m.api_ids
            if a in apis.row
        ]
        self._pair_mashups = np.array([p[0] for p in pairs], dtype=np.int64)
        self._pair_apis = np.array([p[1] for p in pairs], dtype=np.int64)
        # A catalogue without usage history (your own APIs, the tools of MCP servers) is routed on the task's words
        # too: profiles are then descriptions alone, which a small encoder matches loosely. Where past mashups
        # speak, words would push proven APIs out of the call (docs/tuning.md).
        self.routes_on_words = not len(pairs)
        self._names = [(i, catalog.get_api(int(i)).name) for i in self.api_ids]
        self._first_forms = [(i, name, name_forms(name)[-1][0].casefold()) for i, name in self._names]
        rows_of: dict[str, list[int]] = {}
        for row, api_id in enumerate(self.api_ids):
            for name in catalog.get_api(int(api_id)).categories:
                rows_of.setdefault(name, []).append(row)
        self._category_rows = {name: np.array(rows) for name, rows in rows_of.items()}
        # Items of no category (an OpenAPI operation without tags, an MCP tool) beside others that have some:
        # an announced category cannot rule them out, so they stay eligible and compete on their profile.
        self._uncategorised = np.array([not catalog.get_api(int(i)).categories for i in self.api_ids], dtype=bool)
        provider_rows: dict[str, list[int]] = {}
        for row, api_id in enumerate(self.api_ids):
            provider_rows.setdefault(catalog.get_api(int(api_id)).provider_name, []).append(row)
        self._provider_rows = {name: np.array(rows) for name, rows in provider_rows.items()}

    def profile_scores(self, vector: np.ndarray) -> np.ndarray:
        """Per API: the best of its description's and its past mashups' similarity to the task."""
        scores = self._api_matrix @ vector
        if len(self._pair_mashups):
            mashup_sims = self._mashup_matrix @ vector
            np.maximum.at(scores, self._pair_apis, mashup_sims[self._pair_mashups])
        return scores

    def named(self, text: str) -> set[int]:
        """APIs the text names, in full or by their first words."""
        lowered = text.casefold()
        return {int(i) for i, name, first in self._first_forms if first in lowered and mentions(name, text) > 0}

    def route(
        self,
        cfp: CallForProposals,
        vector: np.ndarray,
        top_n: int,
        strategy: str = "embedding",
        excluded_apis: set[int] = frozenset(),
        excluded_categories: set[str] = frozenset(),
        lexical: np.ndarray | None = None,
    ) -> tuple[Routing, list[str]]:
        scores = self.profile_scores(vector)
        ranked_on = "profile similarity"
        if lexical is not None and self.routes_on_words:
            scores = scores + lexical
            ranked_on = "profile similarity and words"
        named = self.named(cfp.requirement)
        mask = np.ones(len(self.api_ids), dtype=bool)
        for category in excluded_categories:
            mask[self._category_rows.get(category, [])] = False
        if self.organisation in ("api", "provider"):
            # An item is eligible unless excluded, and only inside the announced categories when there are some
            # (or outside every category).
            if excluded_apis:
                mask &= ~np.isin(self.api_ids, list(excluded_apis))
            if cfp.categories:
                inside = self._uncategorised.copy()
                for category in cfp.categories:
                    inside[self._category_rows.get(category, [])] = True
                mask &= inside
        if self.organisation == "api":
            rows = np.nonzero(mask)[0]
            boosted = scores[rows] + 10.0 * np.isin(self.api_ids[rows], list(named))  # named ones first
            order = rows[np.lexsort((self.api_ids[rows], -boosted))]
            chosen = order if strategy == "broadcast" else order[:top_n]
            eligible = len(rows)
            contacted = [
                RoutedContractor(
                    contractor=api_contractor_id(int(self.api_ids[r])),
                    similarity=round(float(scores[r]), 4),
                    reason="named in the requirement"
                    if int(self.api_ids[r]) in named
                    else ("broadcast" if strategy == "broadcast" else f"{ranked_on} rank {i + 1}"),
                )
                for i, r in enumerate(chosen)
            ]
        elif self.organisation == "provider":
            # A provider is eligible with whatever of its items the exclusions and the announced categories leave.
            groups = {n: rows[mask[rows]] for n, rows in self._provider_rows.items()}
            names = [n for n, rows in groups.items() if len(rows)]
            contacted, eligible = self._route_groups(
                names, groups, scores, named, strategy, top_n, provider_contractor_id, ranked_on
            )
        else:
            names = [
                n
                for n in self._category_rows
                if n not in excluded_categories and (not cfp.categories or n in cfp.categories)
            ]
            contacted, eligible = self._route_groups(
                names, self._category_rows, scores, named, strategy, top_n, category_contractor_id, ranked_on
            )
        routing = Routing(task_id=cfp.task_id, strategy=strategy, eligible=eligible, contacted=contacted)
        return routing, [c.contractor for c in contacted]

    def _route_groups(
        self, names, rows_of, scores, named, strategy, top_n, contractor_id, ranked_on="profile similarity"
    ) -> tuple[list[RoutedContractor], int]:
        """Contractors that each hold a group of APIs (a category, a provider), ranked by their best API."""
        best = {n: float(scores[rows_of[n]].max()) for n in names}
        named_rows = set(np.nonzero(np.isin(self.api_ids, list(named)))[0]) if named else set()
        holds_named = {n for n in names if named_rows.intersection(rows_of[n].tolist())}
        ranked = sorted(names, key=lambda n: (-(n in holds_named), -best[n], n))
        chosen = ranked if strategy == "broadcast" else ranked[:top_n]
        eligible = len(names)
        contacted = [
            RoutedContractor(
                contractor=contractor_id(n),
                similarity=round(best[n], 4),
                reason="holds an API named in the requirement"
                if n in holds_named
                else ("broadcast" if strategy == "broadcast" else f"{ranked_on} rank {i + 1}"),
            )
            for i, n in enumerate(chosen)
        ]
        return contacted, eligible
