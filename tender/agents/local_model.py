"""A small language model run in this process (a GGUF file through llama-cpp-python, the `local` extra): one per
process and file, shared by every thread that asks, one generation at a time.

What a request pays is its own tokens only: every prompt starts with the same instructions and examples, and
llama.cpp keeps the tokens it evaluated last, so the next prompt evaluates only what follows the part it shares with
them (the instructions are evaluated once, at load). Output is held to a JSON schema by a grammar, compiled once per
schema. A generation stops at its deadline (checked at every token), saying so; the caller decides what then.

`TextModel` is the small interface a reader of requests needs (agents/reasoners/local.py), so that a scripted
stand-in can take its place in tests."""

import json
import os
import threading
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from tender.errors import TenderError

THREADS = 2  # a laptop's share: the model's threads spin, and more than the cores slows every run beside it
CONTEXT_TOKENS = 4096  # instructions and examples (about 1,000), a request of up to 3,000 characters, the answer
BATCH_TOKENS = 512


@dataclass(frozen=True)
class Generation:
    text: str
    prompt_tokens: int  # evaluated for this request: the prompt less the part shared with the last one
    completion_tokens: int
    stopped: str  # "done", "length" (max_tokens reached) or "deadline"
    seconds: float
    prompt_total: int = 0  # the whole prompt, shared part and all (what a server would count)


class TextModel(Protocol):
    """What reads a request: chat messages in, text held to a JSON schema out, within a deadline."""

    name: str  # as a plan names it, e.g. "Qwen2.5-Coder-1.5B"

    def generate(
        self, messages: list[dict[str, str]], schema: dict, max_tokens: int, deadline: float | None
    ) -> Generation:
        """The model's answer to the messages; `deadline` is a time.monotonic() moment, None for none."""
        ...


class LocalModelUnavailable(TenderError):
    """The model cannot be loaded here: llama-cpp-python is not installed, or the file is not a model it runs."""


def runtime_installed() -> bool:
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        return False
    return True


def gguf_name(path: Path) -> str:
    """The model's own name in its GGUF header (general.name), read without loading it; '' where absent."""
    import struct

    with open(path, "rb") as handle:
        if handle.read(4) != b"GGUF":
            return ""
        version, _, count = struct.unpack("<IQQ", handle.read(20))
        if version < 2:
            return ""

        def text() -> str:
            (length,) = struct.unpack("<Q", handle.read(8))
            return handle.read(length).decode("utf-8", "replace")

        sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
        for _ in range(min(count, 64)):  # general.name comes among the first keys
            key = text()
            (kind,) = struct.unpack("<I", handle.read(4))
            if kind == 8:
                value = text()
                if key == "general.name":
                    return value
            elif kind in sizes:
                handle.seek(sizes[kind], os.SEEK_CUR)
            else:  # an array: general.name is never after one in practice
                return ""
    return ""


class LlamaModel:
    """A GGUF file loaded with llama-cpp-python. Use `load` (one per process and file), not this directly."""

    def __init__(self, path: Path, threads: int = THREADS):
        # llama.cpp's OpenMP threads spin between steps by default: on a busy 2-core machine a 20-token answer took
        # 19 s so, 2.5 s with them waiting passively. Read when OpenMP starts, so set before llama.cpp is loaded.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            from llama_cpp import Llama
        except ImportError:
            raise LocalModelUnavailable(
                "llama-cpp-python is not installed: `pip install 'tender-mcp[local]'` installs it."
            ) from None
        self.path = path
        self.name = _shown_name(gguf_name(path) or path.stem)
        try:
            self._llama = Llama(
                model_path=str(path),
                n_ctx=CONTEXT_TOKENS,
                n_batch=BATCH_TOKENS,
                n_threads=threads,
                n_threads_batch=threads,
                verbose=False,
            )
        except (ValueError, RuntimeError) as error:  # what llama.cpp raises for a file it cannot load
            raise LocalModelUnavailable(f"{path} cannot be loaded as a model: {error}") from None
        self._lock = threading.Lock()
        self._grammars: dict[str, Any] = {}
        self._formatter: Any = None

    def grammar(self, schema: dict):
        from llama_cpp import LlamaGrammar

        key = json.dumps(schema, sort_keys=True)
        if key not in self._grammars:
            self._grammars[key] = LlamaGrammar.from_json_schema(key, verbose=False)
        return self._grammars[key]

    def prompt(self, messages: list[dict[str, str]]) -> list[int]:
        """The messages as the model's own chat template writes them, in tokens."""
        if self._formatter is None:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            self._formatter = Jinja2ChatFormatter(
                template=self._llama.metadata["tokenizer.chat_template"],
                eos_token=self._llama.detokenize([self._llama.token_eos()]).decode("utf-8", "replace"),
                bos_token="",
            )
        text = self._formatter(messages=messages).prompt
        return self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=True)

    def count(self, text: str) -> int:
        """The tokens of a text, as this model reads it."""
        return len(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def generate(
        self, messages: list[dict[str, str]], schema: dict, max_tokens: int, deadline: float | None
    ) -> Generation:
        from llama_cpp import StoppingCriteriaList

        started = time.perf_counter()
        past = [False]

        def out_of_time(tokens, logits) -> bool:
            past[0] = deadline is not None and time.monotonic() >= deadline
            return past[0]

        with self._lock:  # one generation at a time: the context and the tokens it holds are the model's
            if deadline is not None and time.monotonic() >= deadline:
                return Generation("", 0, 0, "deadline", 0.0)
            tokens = self.prompt(messages)
            # llama.cpp evaluates only what follows the tokens this prompt shares with the last one it read
            held = self._llama.input_ids[: self._llama.n_tokens].tolist()
            shared = next((i for i, (a, b) in enumerate(zip(held, tokens)) if a != b), min(len(held), len(tokens)))
            reply: Any = self._llama.create_completion(
                prompt=tokens,
                grammar=self.grammar(schema),
                max_tokens=max_tokens,
                temperature=0.0,
                stopping_criteria=StoppingCriteriaList([out_of_time]),
            )
        finish = reply["choices"][0].get("finish_reason")
        return Generation(
            text=reply["choices"][0].get("text") or "",
            prompt_tokens=len(tokens) - shared,
            completion_tokens=int(reply.get("usage", {}).get("completion_tokens", 0)),
            stopped="deadline" if past[0] else "length" if finish == "length" else "done",
            seconds=time.perf_counter() - started,
            prompt_total=len(tokens),
        )

    def warm_up(self, shared: list[dict[str, str]], cache_dir: Path | None = None) -> None:
        """Read now the tokens every prompt that starts with the `shared` messages shares, so that no request pays
        for them; with a `cache_dir`, from the state kept there by an earlier process (made and kept otherwise): a
        command run once then pays a file's read, not seconds of reading its instructions."""
        with self._lock:
            one = self.prompt([*shared, {"role": "user", "content": "a"}])
            two = self.prompt([*shared, {"role": "user", "content": "b"}])
            prefix = one[: next(i for i, (a, b) in enumerate(zip(one, two)) if a != b)]
            kept = self._state_file(prefix, cache_dir) if cache_dir is not None else None
            if kept is not None and kept.is_file() and self._load_state(kept, prefix):
                return
            self._llama.reset()
            self._llama.eval(prefix)
            if kept is not None:
                self._save_state(kept, prefix)

    def _state_file(self, prefix: list[int], cache_dir: Path) -> Path:
        import hashlib

        import llama_cpp

        stat = self.path.stat()
        key = hashlib.sha256(
            json.dumps(
                [str(self.path), stat.st_size, stat.st_mtime_ns, llama_cpp.__version__, CONTEXT_TOKENS, prefix]
            ).encode()
        ).hexdigest()[:24]
        return cache_dir / "local-reader" / f"{key}.state"

    def _load_state(self, file: Path, prefix: list[int]) -> bool:
        """Whether the kept state of these tokens was loaded (a file of another model or version is not)."""
        import ctypes

        import llama_cpp

        tokens = (llama_cpp.llama_token * CONTEXT_TOKENS)()
        count = ctypes.c_size_t(0)
        self._llama.reset()
        loaded = llama_cpp.llama_state_load_file(
            self._llama.ctx, str(file).encode(), tokens, CONTEXT_TOKENS, ctypes.byref(count)
        )
        if not loaded or list(tokens[: count.value]) != prefix:
            self._llama.reset()
            return False
        self._llama.input_ids[: len(prefix)] = prefix
        self._llama.n_tokens = len(prefix)
        self._llama._requires_eval = True  # the next prompt's first new token refreshes the logits
        return True

    def _save_state(self, file: Path, prefix: list[int]) -> None:
        import llama_cpp

        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            partial = file.with_name(f"{file.name}.{os.getpid()}.partial")
            tokens = (llama_cpp.llama_token * len(prefix))(*prefix)
            if llama_cpp.llama_state_save_file(self._llama.ctx, str(partial).encode(), tokens, len(prefix)):
                os.replace(partial, file)
            else:
                partial.unlink(missing_ok=True)
        except OSError:
            pass  # a cache that cannot be written costs the next process the reading, nothing else


def _shown_name(name: str) -> str:
    """The header's name as a plan says it: "Qwen2.5 Coder 1.5B Instruct" -> "Qwen2.5-Coder-1.5B"."""
    words = name.replace("_", " ").split()
    kept = [w for w in words if w.lower() not in ("instruct", "gguf", "chat")]
    return "-".join(kept) or name


_LOADING = threading.Lock()


def load(path: Path, threads: int = THREADS) -> LlamaModel:
    """The model in this file, loaded once per process (a second load would map 1 GB more), also where threads ask
    for it at once."""
    with _LOADING:
        return _load(path, threads)


@lru_cache(maxsize=2)
def _load(path: Path, threads: int) -> LlamaModel:
    return LlamaModel(path, threads)
