# Two entry points for a fresh machine: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: setup catalog demo test eval bench clean

$(BIN)/tender: pyproject.toml
	$(PY) -m venv $(VENV)
	# The CPU build of torch first; an unpinned torch would pull several GB of CUDA.
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(BIN)/tender

setup: $(BIN)/tender

catalog.db: $(BIN)/tender
	$(BIN)/tender catalog build

catalog: catalog.db

demo: catalog.db
	$(BIN)/tender catalog info
	$(BIN)/tender recommend "A site that shows nearby restaurants on a map with their reviews"

test: $(BIN)/tender
	$(BIN)/pytest -q

eval: catalog.db
	$(BIN)/tender eval --protocol all --sample 100 --seed 0 --json out/eval.json --plot out/eval.png
	$(BIN)/tender eval --protocol all --sample 100 --seed 0 --mask-api-names --json out/eval-masked.json --plot out/eval-masked.png

clean:
	rm -rf $(VENV) catalog.db *.egg-info
