"""Whether an awarded item serves its need: the matcher's judgement, read where a plan is about to award.

The ranking score rests on a general-purpose encoder and on features fitted on web APIs and MetaTool's tools; near
misses score like right answers ("live theme park ride wait times": the National Park Service's API, 0.46). The
matcher (tender-matcher: all-MiniLM-L6-v2 with a delta trained for this judgement on seven kinds of tool data, with
mined near misses as negatives; docs/matcher.md) tells them apart better: over the awards of the judged suites' dev
parts, its similarity of the need and the item below FLOOR marked 18 of the assistant suite's 31 wrong awards and
1 of its 80 right ones, on today's suite 5 of 30 and 1 of 60 (docs/tuning.md). It never saw these suites, nor the
MCP suite, where it marked 23 of 169 and 11 of 413.

A judge reads only what a plan would award (a few items a request), each item's text once a process."""

import re
import threading

import numpy as np

FLOOR = 0.35  # chosen on the assistant and today's suites' dev parts (docs/tuning.md)
# What it judges: whole services (an MCP server, a web API), whose text says what the service is for. Not a single
# tool or operation: their few words and a need's pronouns ("download it", "recreate it from job.yaml") leave it
# too little to go on (the MCP suite's tools, dev: a need covered by every plan 0.415 -> 0.374 when it judged them).
KINDS = frozenset({"server", "api"})
# Where it judges: catalogues that hold MCP servers (today's: servers of uneven descriptions by the thousand, beside
# web APIs), where near misses are what a plan gets wrong. Not a catalogue of web APIs or plugins alone: on
# MetaTool's plugins it turned away the right plugin with the wrong one (single-tool recall 0.545 -> 0.507, dev).


# Words that say only which form a need takes ("a live gym occupancy API", "an MCP server for Jira"): the form is
# chosen apart (policy.py), and the matcher read "API" in both texts as a match (ApiMedic, "a medical symptom checker
# API", 0.35 to "live gym occupancy API", 0.27 to "live gym occupancy").
_FORM_WORDS = re.compile(r"\bapis?\b|\bmcp(?: servers?| tools?)?\b", re.I)


def what_it_asks(need: str) -> str:
    """The need less the words that say its form; the need itself where nothing else is left."""
    asked = " ".join(_FORM_WORDS.sub(" ", need).split())
    return asked or need


class Judge:
    """The matcher's similarity of a need and an item's text (the text the catalogue embeds). Thread-safe."""

    def __init__(self, embedder, floor: float = FLOOR):
        self.embedder = embedder
        self.floor = floor
        self._items: dict[int, np.ndarray] = {}  # an item's text does not change while a catalogue is open
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return str(getattr(self.embedder, "model_name", "the matcher"))

    def similarities(self, pairs: list[tuple[str, int, str]]) -> list[float]:
        """Each (need, item id, item text)'s similarity, in order: the needs in one call of the model, then each
        item it has not read yet."""
        with self._lock:
            missing = list({i: t for _, i, t in pairs if i not in self._items}.items())
        for i, text in missing:  # one at a time: a few texts of unlike lengths, padded together, cost more
            vector = np.asarray(self.embedder.embed([text], role="document")[0], dtype=np.float32)
            with self._lock:
                self._items[i] = vector
        needs = list(dict.fromkeys(need for need, _, _ in pairs))
        vectors = self.embedder.embed([what_it_asks(need) for need in needs], role="query") if needs else []
        by_need = dict(zip(needs, vectors))
        return [float(by_need[need] @ self._items[i]) for need, i, _ in pairs]

    def warm_up(self) -> None:
        self.embedder.embed(["warm up"], role="query")
