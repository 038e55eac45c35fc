"""Builds the manager's and the contractors' reasoners from the backends asked for.

"offline" is the embedded reasoner (the default). "llm" is a chat model behind any OpenAI-compatible
endpoint, with the embedded reasoner as its fallback for each step it cannot answer. The CLI and the server
both make their LLMSettings with `llm_settings` from the settings read from the environment (tender.settings);
nothing here reads os.environ."""

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from tender.catalog import TenderError
from tender.settings import LLM_IN_FLIGHT_DEFAULT, LLM_RETRIES_DEFAULT, LLM_TIMEOUT_DEFAULT_S

from .base import Reasoner

if TYPE_CHECKING:
    from ..local_model import TextModel

BACKENDS = ("offline", "llm")


class LLMNotConfigured(TenderError):
    pass


@dataclass(frozen=True)
class LLMSettings:
    base_url: str | None = None  # TENDER_LLM_BASE_URL / --llm-base-url, e.g. http://localhost:8000/v1
    model: str | None = None  # TENDER_LLM_MODEL / --llm-model
    api_key: str | None = None  # TENDER_LLM_API_KEY (else OPENAI_API_KEY) / --llm-api-key
    timeout_s: float = LLM_TIMEOUT_DEFAULT_S
    max_retries: int = LLM_RETRIES_DEFAULT
    max_in_flight: int = LLM_IN_FLIGHT_DEFAULT
    cache_path: Path | None = None  # where replies are kept; None: nowhere
    use_cache: bool = True  # --no-cache: False
    max_tokens_per_request: int | None = None  # --max-tokens-per-request; a RunContext's max_tokens wins
    temperature: float | None = 0.0  # None: the server's default (some reasoning models accept no other)
    max_output_tokens: int | None = 2048  # per completion, sent as max_tokens; None: the server's default
    # LLM contractors reached by one call for proposals (the router's nearest; each costs a call); None: top_n
    contractors_per_call: int | None = 4


def llm_settings(
    settings,
    *,
    base_url: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    timeout_s: float | None = None,
    max_in_flight: int | None = None,
    use_cache: bool | None = None,
    max_tokens_per_request: int | None = None,
) -> LLMSettings:
    """The one place LLMSettings are made, for the CLI and the server alike: `settings` (a tender.settings.Settings,
    read from the environment) with the CLI's flags, where given (not None), over it."""
    return LLMSettings(
        base_url=base_url or settings.llm_base_url,
        model=model or settings.llm_model,
        api_key=api_key or settings.llm_api_key,
        timeout_s=timeout_s if timeout_s is not None else settings.llm_timeout_s,
        max_in_flight=max_in_flight if max_in_flight is not None else settings.llm_in_flight,
        cache_path=settings.catalog_path.with_name("llm-cache.db"),
        use_cache=settings.llm_cache if use_cache is None else use_cache,
        max_tokens_per_request=max_tokens_per_request,
    )


def build_reasoners(
    manager_backend: str = "offline",
    contractor_backend: str = "offline",
    llm: LLMSettings | None = None,
    text_model: "TextModel | None" = None,
    endpoint_model: "TextModel | None" = None,
) -> tuple[Reasoner, Reasoner]:
    """(manager reasoner, contractor reasoner). Both roles on "llm" share one LLM reasoner: one cache,
    one limit of calls in flight. An offline manager with a `text_model` (assembly.text_model_for) has it read the
    request (step 1) and the rules do the rest. `endpoint_model` answers the LLM backend in this process where its
    base URL is "local" (local_endpoint.py). Raises LLMNotConfigured when "llm" is asked for without an endpoint
    or model."""
    from .embedded import EmbeddedReasoner

    for role, backend in (("manager", manager_backend), ("contractor", contractor_backend)):
        if backend not in BACKENDS:
            raise TenderError(f"Unknown {role} backend {backend!r}; use one of: {', '.join(BACKENDS)}.")
    offline = EmbeddedReasoner()
    manager: Reasoner = offline
    if text_model is not None and manager_backend == "offline":
        from .local import LocalReader

        manager = LocalReader(text_model, fallback=offline)
    if "llm" not in (manager_backend, contractor_backend):
        return manager, offline
    chat = build_llm_reasoner(llm or LLMSettings(), fallback=offline, endpoint_model=endpoint_model)
    return (chat if manager_backend == "llm" else manager), (chat if contractor_backend == "llm" else offline)


def build_llm_reasoner(
    settings: LLMSettings, fallback: Reasoner, endpoint_model: "TextModel | None" = None
) -> Reasoner:
    from .local_endpoint import BASE_URL, LocalChatTransport, is_local

    transport = None
    if is_local(settings.base_url):
        if endpoint_model is None:
            raise LLMNotConfigured(
                "TENDER_LLM_BASE_URL=local runs the LLM steps on the local model, and none is loaded: "
                "`tender models pull qwen2.5-coder-1.5b` fetches it (or set TENDER_REQUEST_MODEL to a .gguf file)."
            )
        settings = replace(settings, base_url=BASE_URL, model=settings.model or endpoint_model.name)
        transport = LocalChatTransport(endpoint_model)
    if not settings.base_url:
        raise LLMNotConfigured(
            "The llm backend needs an OpenAI-compatible endpoint: set TENDER_LLM_BASE_URL or pass --llm-base-url "
            "(e.g. https://api.openai.com/v1, http://localhost:8000/v1 for vLLM, http://localhost:11434/v1 for Ollama)."
        )
    if not settings.model:
        raise LLMNotConfigured(
            "The llm backend needs a model name: set TENDER_LLM_MODEL or pass --llm-model "
            "(e.g. gpt-4o-mini, or the name the server was started with)."
        )
    from .cache import ResponseCache
    from .llm import LLMReasoner

    cache = ResponseCache(settings.cache_path) if settings.use_cache and settings.cache_path else None
    return LLMReasoner(
        base_url=settings.base_url,
        model=settings.model,
        api_key=settings.api_key,
        fallback=fallback,
        timeout_s=settings.timeout_s,
        max_retries=settings.max_retries,
        max_in_flight=settings.max_in_flight,
        cache=cache,
        temperature=settings.temperature,
        max_output_tokens=settings.max_output_tokens,
        max_tokens_per_request=settings.max_tokens_per_request,
        contractors_per_call=settings.contractors_per_call,
        transport=transport,
    )
