# wismo: two commands on a fresh machine, `make report` and `make test`; the rest are conveniences.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.wismo-installed

.PHONY: setup report test lab runs clean

## setup: create .venv if missing and install the pinned dependencies and wismo itself
setup: $(STAMP)

$(STAMP): pyproject.toml requirements.lock
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c requirements.lock -e '.[dev]'
	@touch $(STAMP)

## report: execute every notebook with papermill into outputs/, render HTML and outputs/index.html
report: $(STAMP)
	$(BIN)/wismo report

## test: the whole test suite, notebooks included
test: $(STAMP)
	MPLBACKEND=Agg $(BIN)/python -m pytest

## lab: JupyterLab on 127.0.0.1 with the project's environment as the python3 kernel
lab: $(STAMP)
	$(BIN)/jupyter lab --ip 127.0.0.1 --notebook-dir notebooks

## runs: record a new pair of scripted runs (6 orders x 3 repetitions per design) into data/runs/
# The latency model's parameters are illustrative, not fitted: a modelled time, labelled so and kept apart.
runs: $(STAMP)
	$(BIN)/wismo evaluate both 3 --latency 400 0.05 12

## clean: remove generated outputs (keeps .venv)
clean:
	find outputs -mindepth 1 ! -name .gitkeep -exec rm -rf {} +
