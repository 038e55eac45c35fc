"""APIs found by meaning: what the search_apis tool and `tender catalog search` both return."""

from collections.abc import Sequence

from tender.catalog import Catalog, TenderError

from .schemas import ApiHit, SearchResults

# A search or category query longer than this is refused rather than embedded and echoed back: what an API
# should do fits in a sentence or two, and a 1 MB query cost seconds of tokenising and came back whole.
MAX_QUERY_CHARS = 1_000
MAX_CATEGORIES = 100  # a search's categories: each is checked and said back in the answer


def check_query(query: str, what: str = "query") -> str:
    """The query as given, or TenderError, saying the limit, when it is empty or longer than MAX_QUERY_CHARS."""
    if not query.strip():
        raise TenderError(f"The {what} is empty; describe what the API should do, e.g. 'send SMS messages'.")
    if len(query) > MAX_QUERY_CHARS:
        raise TenderError(
            f"The {what} is {len(query):,} characters long; at most {MAX_QUERY_CHARS:,} are searched. Shorten it to "
            "what the API should do, e.g. 'send SMS messages'."
        )
    return query


def find_apis(catalog: Catalog, query: str, categories: Sequence[str] = (), limit: int = 10) -> SearchResults:
    """Best match first, optionally within categories. Raises TenderError for an empty or overlong query and
    CategoryNotFound (with close names) for a category the catalogue lacks."""
    check_query(query)
    if len(categories) > MAX_CATEGORIES:
        raise TenderError(
            f"{len(categories):,} categories were given; search in at most {MAX_CATEGORIES} (list_categories names them)."
        )
    names = list(dict.fromkeys(catalog.check_category(c) for c in categories))  # each said once, however often given
    results = []
    for hit in catalog.search(query, kind="api", k=limit, categories=names or None):
        api = catalog.get_api(hit.id)
        results.append(
            ApiHit(
                api_id=api.id,
                name=api.name,
                categories=api.categories,
                score=round(hit.score, 4),
                usage_count=catalog.usage_count(api.id),
                description=short(api.description, 300),
                url=api.url,
            )
        )
    return SearchResults(query=query, categories=names, results=results)


def short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
