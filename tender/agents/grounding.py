"""Whether a bid stands on what the API itself says it does. A popular API bids for every function of a
requirement on its usage history (Google Maps for 'book flights'); such a bid neither serves the function nor
is the step the API is awarded for."""

from .text import mentions

UNGROUNDED_MARGIN = 0.3  # how far a description may trail the function's best-matching one (docs/tuning.md)


class Grounding:
    """A bid is grounded when the function names the API, one of the function's words is in its text, or its
    description trails the function's best-matching description by at most `margin` (0: every bid is). Given no
    function texts (`functions`: id -> text), a name anywhere in the requirement counts: Twitter named for the
    mentions to monitor does not post the summary to Slack, so the function's own text decides where it is known."""

    def __init__(self, proposals, margin: float = UNGROUNDED_MARGIN, functions: dict[str, str] | None = None):
        self.margin = margin
        self.functions = functions or {}
        self.best: dict[str | None, float] = {}
        for p in proposals:
            self.best[p.function_id] = max(
                self.best.get(p.function_id, -1.0), float(p.evidence.get("desc_function", 0.0))
            )

    def __call__(self, p) -> bool:
        return self.pointed_to(p) or (
            float(p.evidence.get("desc_function", 0.0)) >= self.best.get(p.function_id, -1.0) - self.margin
        )

    def pointed_to(self, p) -> bool:
        """The function's own text names the API or shares words with its text: stronger than a description
        near the best, which a popular API reaches for a need beside the one it serves."""
        return self.margin <= 0 or self.named(p) or p.evidence.get("lexical", 0) > 0

    def named(self, p) -> bool:
        text = self.functions.get(p.function_id or "")
        if text is None:
            return float(p.evidence.get("named", 0)) > 0
        return mentions(p.api_name, text) > 0


def drop_ungrounded(chosen: list[int], proposals, grounded: Grounding) -> list[int]:
    """Leave out an API chosen on its history alone where another chosen API's own text matches the function:
    none of its bids is grounded (Google Maps beside Weather Channel for 'weather')."""
    if grounded.margin <= 0:
        return chosen
    bids: dict[int, list] = {}
    for p in proposals:
        if p.api_id in chosen:
            bids.setdefault(p.api_id, []).append(p)
    served = {p.function_id for ps in bids.values() for p in ps if grounded(p)}
    return [a for a in chosen if not bids.get(a) or any(grounded(p) or p.function_id not in served for p in bids[a])]


def award_bids(proposals, functions: dict[str, str] | None = None, margin: float = UNGROUNDED_MARGIN) -> dict:
    """Per API, the proposal it is awarded on: its bid for a function whose text names it, else its best bid among
    those grounded in its own text, else its best bid (Google Maps chosen for a travel planner serves the map,
    not 'books flights'; Twitter serves 'monitor what people say on Twitter', not the sentiment scoring beside
    it, though the name lifts its bid there too)."""
    grounded = Grounding(proposals, margin, functions)

    def claim(p) -> tuple:
        return (functions is not None and grounded.named(p), grounded(p), p.score)

    best: dict = {}
    for p in proposals:
        if p.api_id not in best or claim(p) > claim(best[p.api_id]):
            best[p.api_id] = p
    return best
