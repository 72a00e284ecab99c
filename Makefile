# sqlgold: every target sets itself up; a fresh machine needs only python3 and make.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
GENSTAMP := $(VENV)/.installed-generate
SQLGOLD := $(BIN)/sqlgold

# DB: a DuckDB file or a server URL; empty, the embedded database in the user's cache
# folder (built there on first use; `sqlgold db path` prints where)
DB      ?=
DBARG    = $(if $(DB),--db $(DB))
DBFILE   = $(or $(DB),$(shell $(SQLGOLD) db path))
NAME    ?= omop
SOURCE  ?= data/benchmark/$(NAME)_source.jsonl
TASKS   ?= data/benchmark/$(NAME)_tasks.jsonl
JOBS    ?= 1
SPARK_PORT ?= 15002
SPARK_DIR  ?= .spark
SPARK_STAMP := $(VENV)/.spark-installed
DOCSTAMP := $(VENV)/.installed-docs
PAGESTAMP := $(VENV)/.installed-pages

.PHONY: help venv db curate grounding verify test bench lint docs publish score generate clean spark-up spark-down bench-spark

help:  ## list the targets
	@grep -E '^[a-z]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)  ## create .venv and install sqlgold into it

# the optional extra of `sqlgold generate` (openai, bm25s): make curate never needs it
$(GENSTAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev,generate]'
	touch $(GENSTAMP)

# pyspark (about 540 MB with its Connect client) only for the targets that use Spark
$(SPARK_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev,spark]'
	touch $(SPARK_STAMP)

# Playwright (its driver; the browser is Debian's chromium) for the review pages' browser
# tests and bench: make curate never needs it
$(PAGESTAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev,pages]'
	touch $(PAGESTAMP)

spark-up: $(SPARK_STAMP)  ## start a local Spark Connect server (port SPARK_PORT) and load the CDM
	$(BIN)/python -m curate.database.spark_server start --port $(SPARK_PORT) --dir $(SPARK_DIR)
	$(SQLGOLD) db load sc://localhost:$(SPARK_PORT) --from $(DBFILE) -q

spark-down:  ## stop the local Spark Connect server
	$(BIN)/python -m curate.database.spark_server stop --dir $(SPARK_DIR)

db: $(STAMP)  ## build the embedded OMOP database (Synthea 1k) in the user cache folder (or DB=file) and print its row counts
	$(SQLGOLD) db build $(if $(DB),--out $(DB))

curate: $(STAMP)  ## curate the project's source tasks into data/benchmark/ (+ grounding docs); any drop fails (exit 3)
	$(SQLGOLD) curate $(SOURCE) $(DBARG) --out $(TASKS) --jobs $(JOBS) --strict
	$(SQLGOLD) grounding $(DBARG) --tasks $(TASKS) --out data/grounding

grounding: $(STAMP)  ## regenerate data/grounding/ (schema, vocabulary, DuckDB notes, examples)
	$(SQLGOLD) grounding $(DBARG) --tasks $(TASKS) --out data/grounding

verify: $(STAMP)  ## check one pair: make verify GOLD=... [ANSWER=...] (or ID=... [SOURCE=...]) [TODAY=YYYY-MM-DD] [WATCH=1]
	@test -n "$(GOLD)$(ID)" || { echo "usage: make verify GOLD=... [ANSWER=...] or make verify ID=..." >&2; exit 2; }
	$(SQLGOLD) verify $(DBARG) $(if $(ID),--id $(ID) --source $(SOURCE),--gold "$(GOLD)" $(if $(ANSWER),--answer "$(ANSWER)")) $(if $(TODAY),--today $(TODAY)) $(if $(WATCH),--watch)

test: $(STAMP) $(GENSTAMP) $(SPARK_STAMP) $(PAGESTAMP)  ## run the test suite (builds its own database; starts its own PostgreSQL and Spark servers; opens the review pages in headless Chromium)
	$(BIN)/python -m pytest

publish: $(STAMP)  ## immutable release: make publish VERSION=0.1.0 [PUSH=org/name]
	@test -n "$(VERSION)" || { echo "usage: make publish VERSION=x.y.z" >&2; exit 2; }
	$(SQLGOLD) publish $(TASKS) --version $(VERSION) $(DBARG) --out data/benchmark/releases $(if $(REPO_ID),--repo-id $(REPO_ID)) $(if $(PUSH),--push $(PUSH))

score: $(STAMP)  ## score predictions: make score PREDICTIONS=preds.jsonl OUT=runs/x [PROFILE=sqlgold] [SPLIT=test] [SUITE=dir]
	@test -n "$(PREDICTIONS)" -a -n "$(OUT)" || { echo "usage: make score PREDICTIONS=file.jsonl OUT=dir" >&2; exit 2; }
	@# exit code 3 (some tasks gold_drift) still writes the report, then fails the target
	$(SQLGOLD) score run $(TASKS) $(PREDICTIONS) --out $(OUT) $(DBARG) --profile $(or $(PROFILE),sqlgold) --split $(or $(SPLIT),test) --jobs $(JOBS) $(if $(SUITE),--suite $(SUITE)); \
	rc=$$?; if [ $$rc -ne 0 ] && [ $$rc -ne 3 ]; then exit $$rc; fi; \
	$(SQLGOLD) score report $(OUT) && exit $$rc

generate: $(GENSTAMP)  ## ask a model: make generate MODEL=qwen2.5:7b BASE_URL=http://localhost:11434/v1 MODE=zero-shot|rag [SPLIT=test] [OUT=...]
	@test -n "$(MODEL)" -a -n "$(BASE_URL)" || { echo "usage: make generate MODEL=name BASE_URL=http://host:port/v1 [MODE=zero-shot|rag] [OUT=preds.jsonl]" >&2; exit 2; }
	$(SQLGOLD) generate $(TASKS) $(DBARG) --grounding data/grounding --model "$(MODEL)" --base-url "$(BASE_URL)" --mode $(or $(MODE),zero-shot) --split $(or $(SPLIT),test) --jobs $(JOBS) --resume --out "$(or $(OUT),runs/preds/$(subst /,_,$(subst :,_,$(MODEL)))-$(or $(MODE),zero-shot).jsonl)"

bench: $(SPARK_STAMP) $(PAGESTAMP)  ## measure curation and scoring cost (bench/latest.json), the Spark figures (bench/spark.json), the review pages (bench/pages.json) and the test suites (bench/suite.json)
	$(BIN)/python bench/run_bench.py --db $(DBFILE)
	$(BIN)/python bench/bench_spark.py --db $(DBFILE)
	$(BIN)/python bench/bench_pages.py --db $(DBFILE)
	$(BIN)/python bench/bench_suite.py --db $(DBFILE)

bench-spark: $(SPARK_STAMP)  ## only the Spark column and the 1x-10x scale figure (bench/spark.json)
	$(BIN)/python bench/bench_spark.py --db $(DBFILE)

lint: $(STAMP)  ## ruff (lint and format check) and mypy (the execution and comparison parts)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy

# MkDocs only for the documentation site: make curate never needs it
$(DOCSTAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev,docs]'
	touch $(DOCSTAMP)

docs: $(DOCSTAMP)  ## write the generated reference pages (docs/reference/), then build docs/ into site/ with MkDocs; a broken link fails
	$(BIN)/python -m curate.cli.reference docs/reference
	$(BIN)/mkdocs build --strict --quiet

clean:  ## remove the virtual environment and what make built here (the user cache folder stays: sqlgold config shows it)
	rm -rf $(VENV) $(SPARK_DIR) site
