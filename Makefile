# sqlgold: every target sets itself up; a fresh machine needs only python3 and make.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
SQLGOLD := $(BIN)/sqlgold

DB      ?= data/omop/synthea1k.duckdb
NAME    ?= omop
SOURCE  ?= data/benchmark/$(NAME)_source.jsonl
TASKS   ?= data/benchmark/$(NAME)_tasks.jsonl
JOBS    ?= 1

.PHONY: help venv db curate verify test bench lint grounding publish score clean

help:  ## list the targets
	@grep -E '^[a-z]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)  ## create .venv and install sqlgold into it

$(DB): | $(STAMP)
	$(SQLGOLD) db build --out $(DB)

db: $(STAMP)  ## build the embedded OMOP database (Synthea 1k) and print its row counts
	$(SQLGOLD) db build --out $(DB)

curate: $(STAMP) $(DB)  ## curate the project's source tasks into data/benchmark/
	$(SQLGOLD) curate $(SOURCE) --db $(DB) --out $(TASKS) --jobs $(JOBS)

verify: $(STAMP) $(DB)  ## check one pair: make verify GOLD=... ANSWER=...  (or ID=... SOURCE=...)
	$(SQLGOLD) verify --db $(DB) $(if $(ID),--id $(ID) --source $(SOURCE),--gold "$(GOLD)" --answer "$(ANSWER)")

test: $(STAMP)  ## run the test suite (builds its own database)
	$(BIN)/python -m pytest

bench: $(STAMP) $(DB)  ## measure curation and scoring cost; writes bench/latest.json
	$(BIN)/python bench/run_bench.py --db $(DB)

lint: $(STAMP)  ## ruff
	$(BIN)/ruff check src tests bench

clean:  ## remove the virtual environment and built database
	rm -rf $(VENV) data/omop .sqlgold-cache
