"""Routing: a call for proposals reaches the contractors holding the task's best candidates by the ranking (the top
N, within the announced categories and outside the exclusions), those holding an item the requirement names first.
A contractor holding a group of items (a category, a provider) is ranked by its best candidate. `broadcast`
reaches every eligible contractor."""

from collections.abc import Collection

from tender.catalog import Catalog
from tender.ranking.retrieval import Shortlist

from .contractor import api_contractor_id, category_contractor_id, provider_contractor_id
from .messages import CallForProposals, RoutedContractor, Routing


class Router:
    def __init__(self, catalog: Catalog, organisation: str):
        self.catalog = catalog
        self.organisation = organisation

    def _holders(self, item: int) -> list[str]:
        api = self.catalog.get_api(item)
        if self.organisation == "api":
            return [api_contractor_id(item)]
        if self.organisation == "provider":
            return [provider_contractor_id(api.provider_name)]
        return [category_contractor_id(c) for c in api.categories]

    def _eligible(
        self, item: int, cfp: CallForProposals, excluded_apis: Collection[int], excluded_categories: Collection[str]
    ) -> bool:
        api = self.catalog.get_api(item)
        if item in excluded_apis or set(excluded_categories).intersection(api.categories):
            return False
        # Inside the announced categories, where there are some; an item of no category cannot be ruled out by one.
        return not cfp.categories or not api.categories or bool(set(cfp.categories) & set(api.categories))

    def route(
        self,
        cfp: CallForProposals,
        shortlists: tuple[Shortlist, ...],
        top_n: int,
        strategy: str = "embedding",
        excluded_apis: Collection[int] = frozenset(),
        excluded_categories: Collection[str] = frozenset(),
    ) -> tuple[Routing, list[str]]:
        best: dict[str, float] = {}
        named: set[str] = set()
        for shortlist in shortlists:
            for c in shortlist.candidates:
                if not self._eligible(c.item, cfp, excluded_apis, excluded_categories):
                    continue
                for holder in self._holders(c.item):
                    if (
                        self.organisation == "category"
                        and cfp.categories
                        and holder.split(":", 1)[1] not in cfp.categories
                    ):
                        continue
                    best[holder] = max(best.get(holder, 0.0), c.score)
                    if c.evidence.named >= 1:
                        named.add(holder)
        ranked = sorted(best, key=lambda h: (-(h in named), -best[h], h))
        if strategy == "broadcast":
            everyone = self._everyone(cfp, excluded_apis, excluded_categories)
            ranked += [h for h in everyone if h not in best]
            chosen = ranked
            eligible = len(everyone)
        else:
            chosen = ranked[:top_n]
            eligible = len(ranked)
        contacted = [
            RoutedContractor(
                contractor=holder,
                similarity=round(best.get(holder, 0.0), 4),
                reason="holds an item the requirement names"
                if holder in named
                else ("broadcast" if strategy == "broadcast" else f"best candidate rank {i + 1}"),
            )
            for i, holder in enumerate(chosen)
        ]
        return Routing(task_id=cfp.task_id, strategy=strategy, eligible=eligible, contacted=contacted), chosen

    def _everyone(
        self, cfp: CallForProposals, excluded_apis: Collection[int], excluded_categories: Collection[str]
    ) -> list[str]:
        holders: dict[str, None] = {}
        for item in self.catalog.api_ids():
            if self._eligible(item, cfp, excluded_apis, excluded_categories):
                holders.update(dict.fromkeys(self._holders(item)))
        return list(holders)
