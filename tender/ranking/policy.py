"""What may take a need, in one place: retrieval, selection and the plan ask it alike.

- An item of another form than the need's: an ability for the assistant is served by an MCP server it can install
  (a server, or a tool of one), never by a web API's documentation; a part of an app by a web API. Only where the
  catalogue holds both forms: in a catalogue of one form, the form chooses nothing.
- A record that is no server to install (a list of servers, a template, a demo) takes no need unless asked
  (`include_deprecated`, which also lets in what its source marks gone).
- An item its source marks gone (deprecated) is a candidate, flagged, and the manager keeps it out of the awards
  unless asked, so that a need only it could serve says so (agents/manager.py)."""

from collections.abc import Iterable

import numpy as np

from tender.catalog.records import Api

FORM_OF_KIND = {"server": "mcp_server", "tool": "mcp_server", "api": "web_api", "operation": "web_api"}
OTHER_FORM = {"mcp_server": "web_api", "web_api": "mcp_server"}
FORM_WORDS = {"mcp_server": "MCP server", "web_api": "web API"}


def form_of(api: Api) -> str:
    return FORM_OF_KIND.get(api.kind, "web_api")


def gone(api: Api) -> bool:
    return api.gone


def unfit(api: Api) -> str:
    """Why a record is no server to install ("a list of servers", "a template", "a demo"), or ""."""
    return str(api.details.get("not_for_use") or "") if api.of_server else ""


class Eligibility:
    """Which of a catalogue's items may take a need of a form, by id and as a mask over `ids` (the vectors' order)."""

    def __init__(self, apis: Iterable[Api], ids: np.ndarray):
        apis = list(apis)
        self.ids = ids
        form = {a.id: form_of(a) for a in apis}
        self.forms = set(form.values())
        self.mixed = self.forms >= {"mcp_server", "web_api"}
        self.unfit = {a.id: reason for a in apis if (reason := unfit(a))}
        self._form = form
        self._masks: dict[tuple[str, bool], np.ndarray] = {}

    def form(self, item: int) -> str:
        return self._form.get(item, "web_api")

    def restricts(self, form: str | None) -> bool:
        """Whether a need of this form rules out items: only where the catalogue holds both forms."""
        return self.mixed and form in OTHER_FORM

    def allows(self, item: int, form: str | None, include_unfit: bool = False) -> bool:
        if item in self.unfit and not include_unfit:
            return False
        return not self.restricts(form) or self._form.get(item) == form

    def mask(self, form: str | None, include_unfit: bool = False) -> np.ndarray:
        """True where an item (in `ids` order) may take a need of this form."""
        key = (form if form is not None and self.restricts(form) else "any", include_unfit)
        if key not in self._masks:
            self._masks[key] = np.array([self.allows(int(i), form, include_unfit) for i in self.ids], dtype=bool)
        return self._masks[key]
