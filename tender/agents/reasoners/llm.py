"""A reasoner on any OpenAI-compatible chat endpoint: OpenAI, vLLM, Ollama, llama.cpp's server.

For each task it renders the prompt files into messages (prompts.py) and asks for the task's output as
JSON: by JSON-Schema structured output, or, where the server turns that down, by JSON mode carrying the
schema (llama.cpp's server then constrains its output to it). The schema is the step's own (prompts.answer_schema):
only the fields the step needs, the ids and names offered as enums, strings and lists bounded. The answer is
validated against the output model and the task's own rules (propose only your own APIs, choose only candidate
categories, select only proposed APIs). A harmless fault whose fix is unambiguous is tidied with a note instead
of costing a round trip (a dependency on no function dropped, categories or selections past the maximum cut to
the first ones, repeats dropped, a bid with neither proposal nor refusal read as a refusal). Any other invalid
answer goes back once with the problem and the answer's shape. If it is still invalid,
or the endpoint fails after the client's retries (an HTTP 200 whose body is no chat completion included),
or the run's token budget or deadline is spent, the fallback (embedded) reasoner answers that step and a
note in the run says so. Nothing is clamped: a bid score of 7 is an invalid answer, not a score of 1.

Time is bounded per call, not per read: `timeout_s` bounds each attempt from connecting to the last byte
(httpx's own timeout bounds each read, so a server trickling a byte a second would hold a call for ever),
and a call as a whole, retries included, never outlives the run's deadline."""

import json
import logging
import threading
import time
from functools import singledispatch

import httpx2 as httpx  # the HTTP client openai is built on
import openai
from pydantic import BaseModel, ValidationError

from ..context import RunContext
from ..tasks import (
    BidTask,
    CategoryMapping,
    DecomposeTask,
    MapAllTask,
    MapCategoriesTask,
    MappingBatch,
    SelectTask,
    Task,
)
from .base import Out, Reasoner
from ...safety import redact
from ...settings import LLM_IN_FLIGHT_DEFAULT, LLM_RETRIES_DEFAULT, LLM_TIMEOUT_DEFAULT_S
from .cache import Completion, ResponseCache
from .prompts import answer_schema, render_messages, repair_message

log = logging.getLogger(__name__)

# Status codes with which servers turn down a response_format they lack (llama.cpp's server: 500).
FORMAT_REFUSALS = {400, 422, 500, 501}
_COUNTING = threading.Lock()  # parallel bids add to one run's counters


class InvalidAnswer(Exception):
    """The model's answer cannot be used; the message says why, and goes back to the model once."""


class Unavailable(Exception):
    """The endpoint gave no answer; the message says why and what to check. `pause`: worth not asking again for a while."""

    def __init__(self, reason: str, pause: bool):
        super().__init__(reason)
        self.pause = pause


class StillInvalid(InvalidAnswer):
    """The answer sent back for repair came back invalid again."""


class _OverBudget(Exception):
    pass


class _AttemptLimits(threading.local):
    """The current call's limits, for the transport: set on the thread that makes the call."""

    until: float | None = None  # time.monotonic() past which no attempt may go on
    timeout_s: float = LLM_TIMEOUT_DEFAULT_S


_limits = _AttemptLimits()


class _BoundedTransport(httpx.HTTPTransport):
    """Ends an attempt whose reply is still arriving `timeout_s` after it began, or past the call's limit."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if _limits.until is None:
            return super().handle_request(request)
        until = min(time.monotonic() + _limits.timeout_s, _limits.until)
        if time.monotonic() >= until:
            raise httpx.ConnectTimeout("the call's time was up before this attempt", request=request)
        response = super().handle_request(request)
        response.stream = _Until(response.stream, until)
        return response


class _Until(httpx.SyncByteStream):
    def __init__(self, stream, until: float):
        self._stream, self._until = stream, until

    def __iter__(self):
        for chunk in self._stream:
            if time.monotonic() > self._until:
                raise httpx.ReadTimeout("the reply was still arriving when its time was up")
            yield chunk

    def close(self) -> None:
        self._stream.close()


def _within(seconds: float, call):
    """call() on a thread of its own, waited for at most `seconds`: what no timeout inside the HTTP client
    can bound (headers trickled a byte at a time) cannot hold the run. The thread, left behind, ends at its
    attempt's own limit."""
    outcome: dict = {}

    def target():
        try:
            outcome["value"] = call()
        except BaseException as error:  # handed to the waiting thread
            outcome["error"] = error

    worker = threading.Thread(target=target, daemon=True, name="tender-llm-call")
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        return None
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


class LLMReasoner(Reasoner):
    """Reasons with a chat model. Safe to share between threads and runs; at most `max_in_flight`
    requests are open at once, and contractors bid in parallel up to that limit."""

    name = "llm"
    uses_llm = True

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        fallback: Reasoner,
        api_key: str | None = None,
        timeout_s: float = LLM_TIMEOUT_DEFAULT_S,
        max_retries: int = LLM_RETRIES_DEFAULT,
        max_in_flight: int = LLM_IN_FLIGHT_DEFAULT,
        cache: ResponseCache | None = None,
        temperature: float | None = 0.0,
        max_output_tokens: int | None = 2048,
        max_tokens_per_request: int | None = None,
        pause_s: float = 30,
        contractors_per_call: int | None = 4,
        transport: httpx.BaseTransport | None = None,
    ):
        # What notes, logs and the cache see: without the credentials a URL may carry (user:password@host).
        self.base_url = redact(base_url.rstrip("/"))
        self.model = model
        self.fallback = fallback
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.max_in_flight = max_in_flight
        self.cache = cache
        self.temperature = temperature
        self.max_output_tokens = max_output_tokens
        self.max_tokens_per_request = max_tokens_per_request  # used where the run sets no budget of its own
        self.pause_s = pause_s
        # As contractors' reasoner: how many contractors a call for proposals reaches (the router's nearest), since
        # each costs a call; None: the request's top_n.
        self.contractors_per_call = contractors_per_call
        # Local servers want no key but the client insists on one; and it must not read the environment.
        # `transport`: where the client's requests go instead of the network (local_endpoint.py's model).
        self._client = openai.OpenAI(
            base_url=base_url.rstrip("/"),
            api_key=api_key or "no-key",
            timeout=timeout_s,
            max_retries=max_retries,
            http_client=openai.DefaultHttpxClient(transport=transport or _BoundedTransport()),
        )
        self._slots = threading.BoundedSemaphore(max_in_flight)
        self._takes_json_schema: bool | None = None  # None until the server has answered one request
        self._paused_until = 0.0
        self._pause_reason = ""

    # -- the seam ---------------------------------------------------------------------------------
    def answer(self, task: Task, context: RunContext) -> BaseModel:
        output = self._try(task, context)
        return output if output is not None else self._fall_back(task, context)

    def run_batch(self, tasks: list[Task[Out]], context: RunContext) -> list[Out]:
        """Category mapping for every function of a request in one call; on failure the fallback maps each (one
        step fallen back). Other tasks are answered one by one."""
        ids = [t.function.id for t in tasks if isinstance(t, MapCategoriesTask)]
        if len(tasks) < 2 or len(ids) < len(tasks) or len(set(ids)) < len(ids):
            return [self.run(t, context) for t in tasks]
        output = self._try(MapAllTask(items=list(tasks)), context)
        if output is None:
            with _COUNTING:
                context.cost.fallbacks += 1
            return [self.fallback.run(t, context) for t in tasks]
        assert isinstance(output, MappingBatch)
        chosen = {m.function_id: m.categories for m in output.mappings}
        return [CategoryMapping(categories=chosen[i]) for i in ids]  # type: ignore[misc]  # the tasks map categories

    def _try(self, task: Task, context: RunContext) -> BaseModel | None:
        """The LLM's valid answer, or None (with a note saying why) when the fallback must answer."""
        context.check()
        where = describe_step(task)
        if self._over_budget(context):
            self._note_budget(context)
            return None
        if context.past_deadline():
            self._note_deadline(context)
            return None
        if time.monotonic() < self._paused_until:
            note_once(
                context,
                f"The LLM endpoint failed ({self._pause_reason}); steps in the {self.pause_s:g} s "
                f"after that used the {self.fallback.name} reasoner without asking it.",
            )
            return None
        try:
            return self._answer(task, where, context)
        except Unavailable as error:
            if error.pause:
                self._paused_until, self._pause_reason = time.monotonic() + self.pause_s, str(error)
            context.note(
                f"{where}: the LLM endpoint failed ({error}); the {self.fallback.name} reasoner answered this step."
            )
        except StillInvalid as error:
            context.note(
                f"{where}: the repaired answer was still invalid ({error}); "
                f"the {self.fallback.name} reasoner answered this step."
            )
        except InvalidAnswer as error:
            context.note(
                f"{where}: the LLM's answer was invalid ({error}); "
                f"the {self.fallback.name} reasoner answered this step."
            )
        except _OverBudget:
            self._note_budget(context)
            context.note(
                f"{where}: no token budget left to repair the answer; "
                f"the {self.fallback.name} reasoner answered this step."
            )
        return None

    def _answer(self, task: Task, where: str, context: RunContext) -> BaseModel:
        messages = render_messages(task)
        completion, keep = self._complete(messages, task, where, context)
        try:
            output, fixes = parse(task, completion)
        except InvalidAnswer as error:
            problem = str(error)
            keep.drop()
        else:
            keep()
            self._note_fixes(fixes, where, context)
            return output
        context.note(f"{where}: the LLM's answer was invalid ({problem}); sent it back once to be repaired.")
        if self._over_budget(context):
            raise _OverBudget()
        messages = [*messages, {"role": "assistant", "content": completion.content}, repair_message(problem, task)]
        with _COUNTING:
            context.cost.repairs += 1
        completion, keep = self._complete(messages, task, where, context, repair=True)
        try:
            output, fixes = parse(task, completion)
        except InvalidAnswer as error:
            keep.drop()
            raise StillInvalid(str(error)) from None
        keep()
        context.note(f"{where}: the repaired answer is valid.")
        self._note_fixes(fixes, where, context)
        return output

    @staticmethod
    def _note_fixes(fixes: list[str], where: str, context: RunContext) -> None:
        if fixes:
            with _COUNTING:
                context.cost.tidied += 1
            context.note(f"{where}: tidied the LLM's answer ({'; '.join(fixes)}) instead of asking again.")

    def _fall_back(self, task: Task, context: RunContext) -> BaseModel:
        with _COUNTING:
            context.cost.fallbacks += 1
        return self.fallback.run(task, context)

    def _budget(self, context: RunContext) -> int | None:
        return context.max_tokens if context.max_tokens is not None else self.max_tokens_per_request

    def _over_budget(self, context: RunContext) -> bool:
        budget = self._budget(context)
        return budget is not None and context.cost.tokens.input + context.cost.tokens.output >= budget

    def _note_deadline(self, context: RunContext) -> None:
        note_once(
            context,
            f"{deadline_words(context).capitalize()} passed: the remaining steps "
            f"use the {self.fallback.name} reasoner.",
        )

    def _note_budget(self, context: RunContext) -> None:
        note_once(
            context,
            f"Token budget of {self._budget(context):,} per request reached: the remaining steps "
            f"use the {self.fallback.name} reasoner.",
        )

    # -- one completion: cache, response format, HTTP -----------------------------------------------
    def _complete(
        self, messages: list[dict], task: Task, where: str, context: RunContext, repair: bool = False
    ) -> tuple[Completion, "_Keep"]:
        """The model's reply to `messages`, from the cache or the endpoint, and `keep()`, which caches it: to
        be called once the reply is found valid, so that an invalid one is never replayed. An invalid reply
        found in the cache (kept by an older Tender) is dropped from it. Its tokens are counted."""
        context.check()
        schema = answer_schema(task)
        step = "repairs" if repair else f"{task.role}.{task.step}"
        json_schema = self._request(
            messages,
            {"type": "json_schema", "json_schema": {"name": task.output.__name__, "schema": schema, "strict": False}},
        )
        json_mode = self._request(messages, {"type": "json_object", "schema": schema})
        candidates = {None: [json_schema, json_mode], True: [json_schema], False: [json_mode]}[self._takes_json_schema]
        cache = self.cache
        for request in candidates if cache is not None else []:
            if cache is not None and (hit := cache.get(request)) is not None:
                context.add_tokens(task.role, hit.prompt_tokens, hit.completion_tokens, step, cached=True)
                with _COUNTING:
                    context.cost.cache_hits += 1
                return hit, _Keep(self.cache, request, hit, cached=True)
        try:
            request, completion, retries = self._negotiate(json_schema, json_mode, context)
        except openai.APIError as error:
            raise self._unavailable(error, context) from error
        if retries:
            context.note(f"{where}: answered after {retries} {'retry' if retries == 1 else 'retries'}.")
        context.add_tokens(task.role, completion.prompt_tokens, completion.completion_tokens, step)
        return completion, _Keep(self.cache, request, completion, cached=False)

    def _negotiate(self, json_schema: dict, json_mode: dict, context: RunContext) -> tuple[dict, Completion, int]:
        """Ask with JSON-Schema output until the server turns it down once; then with JSON mode."""
        if self._takes_json_schema is not None:
            request = json_schema if self._takes_json_schema else json_mode
            return request, *self._post(request, context)
        # The first request: a server that lacks json_schema refuses it every time, so do not retry the refusal.
        try:
            completion, retries = self._post(json_schema, context, max_retries=0)
        except (openai.APIConnectionError, openai.RateLimitError):
            if self.max_retries == 0:
                raise
            context.check()
            completion, retries = self._post(json_schema, context, max_retries=self.max_retries - 1)
            retries += 1
        except openai.APIStatusError as error:
            if error.status_code not in FORMAT_REFUSALS:
                raise
            context.check()
            completion, retries = self._post(json_mode, context)  # if this fails too, the question stays open
            self._takes_json_schema = False
            context.note(
                f"The LLM server turned down response_format json_schema (HTTP {error.status_code}); "
                "asking in JSON mode with the schema from now on."
            )
            return json_mode, completion, retries
        self._takes_json_schema = True
        return json_schema, completion, retries

    def _request(self, messages: list[dict], response_format: dict) -> dict:
        """Everything that shapes a reply: what is sent, and the cache key."""
        request: dict[str, object] = {
            "base_url": self.base_url,
            "model": self.model,
            "messages": messages,
            "response_format": response_format,
        }
        if self.temperature is not None:
            request["temperature"] = self.temperature
        if self.max_output_tokens is not None:
            request["max_tokens"] = self.max_output_tokens
        return request

    def _post(self, request: dict, context: RunContext, max_retries: int | None = None) -> tuple[Completion, int]:
        """One chat completion over HTTP, within the limit of calls in flight and the run's deadline.
        Raises openai's errors, or Unavailable when the reply is no chat completion or time ran out."""
        retries = self.max_retries if max_retries is None else max_retries
        client = self._client if max_retries is None else self._client.with_options(max_retries=max_retries)
        params = {key: value for key, value in request.items() if key != "base_url"}
        # Every attempt's timeout, a little for the client's backoff between attempts, and a second's grace so
        # that an attempt's own timeout (the clearer message) comes first.
        limit = (retries + 1) * self.timeout_s + 2 * retries + 1
        remaining = context.remaining_s()
        if remaining is not None:
            limit = min(limit, remaining)
        until = time.monotonic() + limit

        def call():
            if not self._slots.acquire(timeout=limit):
                return None
            _limits.until, _limits.timeout_s = until, self.timeout_s
            try:
                return client.chat.completions.with_raw_response.create(
                    **params, timeout=max(0.1, min(self.timeout_s, until - time.monotonic()))
                )
            finally:
                _limits.until = None
                self._slots.release()

        raw = _within(limit, call)
        if raw is None:
            raise self._out_of_time(limit, context)
        try:
            response = raw.parse()
        except ValueError as error:  # JSONDecodeError: a body sent as JSON that is not
            raise Unavailable(
                f"HTTP 200 with a body that is not JSON ({error}): {self._body(raw)}", pause=True
            ) from None
        if not hasattr(response, "choices"):  # a body sent as text/html, e.g. a proxy's page
            raise Unavailable(f"HTTP 200 with a body that is not a chat completion: {self._body(raw)}", pause=True)
        if not response.choices:
            raise Unavailable("HTTP 200 with a reply that has no choices", pause=True)
        choice, usage = response.choices[0], response.usage
        completion = Completion(
            content=choice.message.content or "",
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
            finish_reason=choice.finish_reason,
        )
        log.debug("%s answered in %s retries: %s", self.model, raw.retries_taken, completion)
        return completion, raw.retries_taken

    @staticmethod
    def _body(raw) -> str:
        text = raw.http_response.text
        return (
            f"{raw.http_response.headers.get('content-type', 'no content type')}, {clip(' '.join(text.split()), 80)!r}"
        )

    def _out_of_time(self, limit: float, context: RunContext) -> Unavailable:
        if context.past_deadline():
            return Unavailable(f"{deadline_words(context)} passed while it was being asked", pause=False)
        return Unavailable(f"no complete answer within {limit:g} s", pause=True)

    def _unavailable(self, error: openai.APIError, context: RunContext) -> Unavailable:
        """What failed, in words that say what to check."""
        attempts = f"{self.max_retries + 1} attempt{'s' if self.max_retries else ''}"
        if isinstance(error, openai.APITimeoutError) and context.past_deadline():
            return Unavailable(f"{deadline_words(context)} passed while it was being asked", pause=False)
        if isinstance(error, openai.APITimeoutError):
            return Unavailable(f"no answer within {self.timeout_s:g} s, {attempts}", pause=True)
        if isinstance(error, openai.APIConnectionError):
            return Unavailable(
                f"cannot reach {self.base_url}, {attempts}; is the server running? "
                "Check TENDER_LLM_BASE_URL or --llm-base-url",
                pause=True,
            )
        if isinstance(error, (openai.AuthenticationError, openai.PermissionDeniedError)):
            return Unavailable(
                f"HTTP {error.status_code}, the server refused the API key; set TENDER_LLM_API_KEY or --llm-api-key",
                pause=True,
            )
        if isinstance(error, openai.NotFoundError):
            return Unavailable(
                f"HTTP 404, no model {self.model!r} at {self.base_url}; check TENDER_LLM_MODEL or "
                "--llm-model, and that the base URL ends in /v1",
                pause=True,
            )
        if isinstance(error, openai.APIStatusError):
            retried = error.status_code in (408, 409, 429) or error.status_code >= 500
            return Unavailable(
                f"HTTP {error.status_code}{', ' + attempts if retried else ''}: {server_message(error)}", pause=retried
            )
        return Unavailable(clip(str(error), 200), pause=False)


class _Keep:
    """Caches one reply when called (the reply was valid); an invalid cached reply is dropped instead."""

    def __init__(self, cache, request: dict, completion: Completion, cached: bool):
        self.cache, self.request, self.completion, self.cached = cache, request, completion, cached

    def __call__(self) -> None:
        if self.cache is not None and not self.cached:
            self.cache.put(self.request, self.completion)

    def drop(self) -> None:
        if self.cache is not None and self.cached:
            self.cache.delete(self.request)


# -- answers -----------------------------------------------------------------------------------
def parse(task: Task, completion: Completion) -> tuple[BaseModel, list[str]]:
    """The task's output from the model's answer and the harmless faults tidied in it, or InvalidAnswer saying
    what is wrong with it."""
    text = strip_code_fence(completion.content)
    cut = " (cut off at the output limit)" if completion.finish_reason == "length" else ""
    try:
        data = json.loads(text, strict=False)  # strict=False: a raw tab or newline inside a string is fine
    except json.JSONDecodeError as error:
        raise InvalidAnswer(f"not valid JSON{cut}: {error.msg} (line {error.lineno}, column {error.colno})") from None
    if not isinstance(data, dict):
        raise InvalidAnswer(f"the JSON is a {type(data).__name__}, not an object")
    shaped = as_output(task, data)
    if not set(shaped) & set(task.output.model_fields):
        # Every field has a default, so an object of none of them would pass as an empty answer (no bid at all).
        raise InvalidAnswer(f"the object has none of the answer's fields ({', '.join(task.output.model_fields)})")
    try:
        output = task.output.model_validate(shaped)
    except ValidationError as error:
        raise InvalidAnswer(f"does not match the schema: {describe_errors(error)}") from None
    fixes = tidy(task, output)
    found = problems(task, output)
    if found:
        raise InvalidAnswer("; ".join(found))
    return output, fixes


@singledispatch
def as_output(task: Task, data: dict) -> dict:
    """The answer's JSON as the output model's fields (the same but for category mapping in one call)."""
    return data


@as_output.register
def _map_all_output(task: MapAllTask, data: dict) -> dict:
    return {"mappings": [{"function_id": key, "categories": value} for key, value in data.items()]}


# -- harmless faults, fixed where the meaning is unambiguous ---------------------------------------
@singledispatch
def tidy(task: Task, output: BaseModel) -> list[str]:
    """Fix in place what has one obvious reading; say what was fixed."""
    return []


@tidy.register
def _tidy_decompose(task: DecomposeTask, output) -> list[str]:
    fixes = []
    if repeated([f.id for f in output.functions]):  # ids are labels in order: number them again
        fixes.append(f"repeated ids: numbered f1 to f{len(output.functions)} in order")
        for number, f in enumerate(output.functions, start=1):
            f.id = f"f{number}"
    ids = {f.id for f in output.functions}
    for f in output.functions:
        kept = [d for d in dict.fromkeys(f.depends_on) if d in ids and d != f.id]
        dropped = [d for d in f.depends_on if d not in ids or d == f.id]
        if dropped:
            fixes.append(f"{f.id} depended on {', '.join(map(repr, dropped))}, no other function: dropped")
        f.depends_on = kept
    return fixes


def _tidy_categories(chosen: list[str], max_categories: int, label: str = "") -> tuple[list[str], list[str]]:
    fixes = []
    unique = list(dict.fromkeys(chosen))
    if len(unique) < len(chosen):
        fixes.append(f"{label}repeated categories dropped")
    if len(unique) > max_categories:
        fixes.append(f"{label}{len(unique)} categories, kept the first {max_categories}")
        unique = unique[:max_categories]
    return unique, fixes


@tidy.register
def _tidy_map(task: MapCategoriesTask, output) -> list[str]:
    output.categories, fixes = _tidy_categories(output.categories, task.max_categories)
    return fixes


@tidy.register
def _tidy_map_all(task: MapAllTask, output) -> list[str]:
    fixes = []
    limits = {t.function.id: t.max_categories for t in task.items}
    for mapping in output.mappings:
        if mapping.function_id in limits:
            mapping.categories, found = _tidy_categories(
                mapping.categories, limits[mapping.function_id], f"{mapping.function_id}: "
            )
            fixes += found
    return fixes


@tidy.register
def _tidy_bid(task: BidTask, output) -> list[str]:
    if not output.proposals and not output.refusal:
        output.refusal = "none of my APIs fits the call"
        return ["no proposal and no refusal: read as a refusal"]
    return []


@tidy.register
def _tidy_select(task: SelectTask, output) -> list[str]:
    fixes = []
    unique = list(dict.fromkeys(output.api_ids))
    if len(unique) < len(output.api_ids):
        fixes.append("repeated api_ids dropped")
    if task.max_apis and len(unique) > task.max_apis:
        fixes.append(f"{len(unique)} APIs selected, kept the first {task.max_apis}")
        unique = unique[: task.max_apis]
    output.api_ids = unique
    return fixes


def strip_code_fence(text: str) -> str:
    text = text.strip()
    if text.startswith("```") and text.endswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    return text.strip()


def describe_errors(error: ValidationError, shown: int = 4) -> str:
    items = error.errors()
    parts = [
        f"{'.'.join(str(p) for p in item['loc']) or 'the object'}: {item['msg']} "
        f"(got {clip(json.dumps(item['input'], default=str), 60)})"
        for item in items[:shown]
    ]
    if len(items) > shown:
        parts.append(f"and {len(items) - shown} more")
    return "; ".join(parts)


@singledispatch
def problems(task: Task, output: BaseModel) -> list[str]:
    """What breaks the task's own rules, beyond the schema."""
    return []


@problems.register
def _decompose(task: DecomposeTask, output) -> list[str]:
    ids = [f.id for f in output.functions]
    found = [f"function id {i!r} is used twice" for i in repeated(ids)]
    found += [
        f"{f.id} depends on {d!r}, which is not another function's id"
        for f in output.functions
        for d in f.depends_on
        if d not in ids or d == f.id
    ]
    return found


@problems.register
def _map(task: MapCategoriesTask, output) -> list[str]:
    names = [c.name for c in task.candidates]
    unknown = [c for c in output.categories if c not in names]
    found = (
        [
            f"{', '.join(map(repr, unknown))} {'is not a candidate' if len(unknown) == 1 else 'are not candidates'}; "
            f"choose from {names}"
        ]
        if unknown
        else []
    )
    found += [f"category {c!r} is chosen twice" for c in repeated(output.categories)]
    if len(output.categories) > task.max_categories:
        found.append(f"{len(output.categories)} categories chosen; at most {task.max_categories}")
    if names and not output.categories:
        found.append("no category chosen; choose at least one")
    return found


@problems.register
def _map_all(task: MapAllTask, output) -> list[str]:
    found = []
    chosen = {m.function_id: m for m in output.mappings}
    for item in task.items:
        mapping = chosen.get(item.function.id)
        if mapping is None:
            found.append(f"no categories for {item.function.id}")
            continue
        found += [
            f"{item.function.id}: {problem}" for problem in _map(item, CategoryMapping(categories=mapping.categories))
        ]
    found += [f"{key!r} is not a function id" for key in chosen if key not in {i.function.id for i in task.items}]
    return found


@problems.register
def _bid(task: BidTask, output) -> list[str]:
    own = [api.api_id for api in task.knowledge.apis]
    found = [
        f"api_id {d.api_id} is not one of your APIs {clip(str(own), 80)}"
        for d in output.proposals
        if d.api_id not in own
    ]
    found += [f"api_id {a} is proposed twice" for a in repeated([d.api_id for d in output.proposals])]
    if not output.proposals and not output.refusal:
        found.append("no proposal and no refusal; propose your APIs that fit, or give a refusal")
    return found


@problems.register
def _select(task: SelectTask, output) -> list[str]:
    proposed = {p.api_id for p in task.proposals}
    found = [f"api_id {a} was not proposed" for a in output.api_ids if a not in proposed]
    found += [f"api_id {a} is selected twice" for a in repeated(output.api_ids)]
    if task.max_apis and len(output.api_ids) > task.max_apis:
        found.append(f"{len(output.api_ids)} APIs selected; at most {task.max_apis}")
    return found


# -- small helpers -----------------------------------------------------------------------------
def describe_step(task: Task) -> str:
    if isinstance(task, BidTask):
        return f"contractor {task.knowledge.contractor}, bid on {task.cfp.task_id}"
    if isinstance(task, MapCategoriesTask):
        return f"manager, map {task.function.id}"
    if isinstance(task, MapAllTask):
        return f"manager, map {', '.join(i.function.id for i in task.items)}"
    return f"{task.role}, {task.step}"


def server_message(error: openai.APIStatusError) -> str:
    """The server's own words: OpenAI-style {"error": {"message": ...}}, else the client's summary."""
    body = error.body
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        body = body["error"]
    message = body.get("message") if isinstance(body, dict) else None
    return clip(str(message or error.message), 160)


def deadline_words(context: RunContext) -> str:
    return (
        f"the request's deadline of {context.deadline_s:g} s"
        if context.deadline_s is not None
        else "the request's deadline"
    )


def note_once(context: RunContext, text: str) -> None:
    if text not in context.notes:
        context.note(text)


def repeated(items: list) -> list:
    seen, twice = set(), []
    for item in items:
        if item in seen and item not in twice:
            twice.append(item)
        seen.add(item)
    return twice


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
