# wismo: two commands on a fresh machine, `make report` and `make test`; the rest are conveniences.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.wismo-installed
# pytest workers for `make test` and `make quick`: three on two cores too, as a third runs while the others wait on
# processes, sockets and timeouts
WORKERS := 3

.PHONY: setup notebook-filter report picture test quick lint browser lab runs traces fuzz bench peers clean

## setup: create .venv if missing and install the pinned dependencies and wismo itself; set up the notebook filter
setup: $(STAMP) notebook-filter

# What the filter strips besides outputs and execution counts: metadata JupyterLab and papermill write on every run.
STRIP_KEYS := metadata.language_info metadata.papermill cell.metadata.papermill cell.metadata.execution

## notebook-filter: in this git working copy, strip notebook outputs and volatile metadata on commit and in diffs
## (nbstripout, as .gitattributes names it), so a notebook run and saved in JupyterLab commits only its source
notebook-filter: $(STAMP)
	@if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
	  git config filter.nbstripout.clean "'$(abspath $(BIN))/nbstripout' --keep-id --extra-keys '$(STRIP_KEYS)'" && \
	  git config filter.nbstripout.smudge cat && \
	  git config filter.nbstripout.required true && \
	  git config diff.ipynb.textconv "'$(abspath $(BIN))/nbstripout' --keep-id --extra-keys '$(STRIP_KEYS)' -t"; fi

$(STAMP): pyproject.toml requirements.lock
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c requirements.lock -e '.[dev]'
	@# Bytecode now, so a fresh clone's first server start does not pay for compiling it.
	$(BIN)/python -m compileall -q lib
	@touch $(STAMP)

## report: execute every notebook with papermill into outputs/, render HTML and outputs/index.html; notebooks run
## in parallel, one per core (WISMO_REPORT_JOBS=N to choose), the index is written once all have succeeded
report: $(STAMP) notebook-filter
	$(BIN)/wismo report

## picture: the README's picture of the answer (docs/answer.svg), redrawn from the build's results in outputs/
picture: report
	$(BIN)/python -m wismo.reports.render.answer_chart outputs docs/answer.svg

## test: lint, then the whole test suite, notebooks and the headless-browser check of the reports included, on
## WORKERS pytest workers (a test file's tests stay together on one worker; the notebooks are built once; see
## tests/conftest.py); it ends with the 30 slowest tests, where the suite's time goes; the reference servers its
## studies run on are installed first, as Chromium is (`make peer-npm peer-git`, once: about 30 s from the registries
## in a fresh clone)
test: $(STAMP) notebook-filter browser peer-npm peer-git lint
	MPLBACKEND=Agg $(BIN)/python -m pytest -n $(WORKERS) --dist loadfile --no-loadscope-reorder --durations=30

## quick: lint, then the test suite without the slow tests (notebooks, JupyterLab, the browser, fuzzing, benchmarks)
quick: $(STAMP) notebook-filter lint
	MPLBACKEND=Agg $(BIN)/python -m pytest -n $(WORKERS) --dist loadfile --no-loadscope-reorder -m "not slow" -q

## lint: ruff over the library, the tests and the notebooks (rules and line length in pyproject.toml), then mypy over
## the library (its standard mode; settings in pyproject.toml)
lint: $(STAMP)
	$(BIN)/ruff check --no-cache lib tests notebooks
	$(BIN)/ruff format --check --no-cache lib tests
	$(BIN)/mypy

## browser: Debian's chromium for the report check, installed when missing (CI runs as root with apt reachable)
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; \
	  else echo "chromium is missing and this is not root: run 'sudo apt-get install chromium', or the browser test skips"; fi; }

## lab: JupyterLab on 127.0.0.1 with the project's environment as the python3 kernel (`make lab PORT=8899` chooses the
## port; without it JupyterLab's own default, 8888 or the next free one)
# JUPYTER_PREFER_ENV_PATH: the venv's python3 kernelspec wins over any user-level one of the same name.
# JupyterLab refuses to run as root unless told to, and containers and CI run as root.
# PORT is set here, not with ?=, so a PORT in the environment (many hosts set one) does not choose it unasked.
PORT =
ALLOW_ROOT = $(if $(filter 0,$(shell id -u)),--allow-root)
lab: $(STAMP) notebook-filter
	JUPYTER_PREFER_ENV_PATH=1 $(BIN)/jupyter lab --ip 127.0.0.1 $(if $(PORT),--port $(PORT)) --notebook-dir notebooks --MappingKernelManager.default_kernel_name=python3 $(ALLOW_ROOT)

## runs: record a new pair of scripted runs (6 orders x 3 repetitions per design) into data/runs/
# The latency model's parameters are illustrative, not fitted: a modelled time, labelled so and kept apart.
runs: $(STAMP)
	$(BIN)/wismo evaluate both 3 --latency 400 0.05 12

## traces: record the shipped OpenTelemetry traces of wismo's own agent loop (scripted model, both designs, the
## article's six cases) into data/traces/ (data/traces/README.md says how they are made), then import them as runs of
## the article's study into data/runs/ (notebook 03 shows them as imported traces)
traces: $(STAMP)
	$(BIN)/wismo traces --record data/traces
	$(BIN)/wismo traces data/traces/granular.json data/traces/focused.json --study data/studies/where-is-my-order.toml \
	  --runs-dir data/runs --out outputs/traces

## fuzz: hostile input against real servers into outputs/fuzz.json: 2,000 argument objects per tool, 200 frames per kind
## over stdio, 200 HTTP requests per kind, 3,000 abandoned sessions
fuzz: $(STAMP)
	$(BIN)/wismo fuzz 2000 --out outputs/fuzz.json

## bench: time the MCP round trip (stdio, HTTP), server start, the whole comparison, `make report` and a 10,000-line
## order, each beside its floor measured in the same run (lib/wismo/bench/); prints a table and writes
## outputs/bench.json (5 to 8 minutes on 2 cores; `.venv/bin/wismo bench --quick` proves it runs)
bench: $(STAMP)
	$(BIN)/wismo bench

## peers: `wismo tokens` on the MCP reference servers, pinned and installed into .peers/ (git-ignored): from npm
## server-everything, server-memory and server-filesystem (Node 20 or newer), from PyPI mcp-server-time and
## mcp-server-git, each in its own venv; writes outputs/peers.json and outputs/peers.txt (the table) and prints the
## table. Not part of `make test`, which installs the servers its studies run on with `make peer-npm peer-git`.
PEERS     := .peers
PEER_NPM  := 2026.8.31
PEER_TIME := 2026.10.19
PEER_GIT  := 2026.10.19
# mcp-server-git's own dependencies that requirements.lock does not pin (the lock's pins apply where they overlap).
PEER_GIT_DEPS := GitPython==3.2.1 gitdb==4.0.12 smmap==5.0.3
PEER_BIN  := $(PEERS)/npm/node_modules/.bin
PEER_OUT  := $(PEERS)/measured
.PHONY: peer-npm peer-time peer-git

## peer-npm, peer-time, peer-git: install one set of the pinned reference servers (each once; a stamp names its version)
peer-npm: $(PEERS)/npm/.installed-$(PEER_NPM)
peer-time: $(PEERS)/time/.installed-$(PEER_TIME)
peer-git: $(PEERS)/git/.installed-$(PEER_GIT)

$(PEERS)/npm/.installed-$(PEER_NPM):
	@major=$$(node --version 2>/dev/null | sed 's/^v//; s/[.].*//'); [ "$${major:-0}" -ge 20 ] && command -v npm >/dev/null || \
	  { echo "the reference servers need node 20 or newer and npm on PATH (node --version says: $$(node --version 2>&1))"; exit 1; }
	npm install --prefix $(PEERS)/npm --save-exact --no-audit --no-fund --loglevel=error \
	  @modelcontextprotocol/server-everything@$(PEER_NPM) @modelcontextprotocol/server-memory@$(PEER_NPM) \
	  @modelcontextprotocol/server-filesystem@$(PEER_NPM)
	@touch $@

$(PEERS)/time/.installed-$(PEER_TIME):
	@test -x $(PEERS)/time/bin/python || $(PYTHON) -m venv $(PEERS)/time
	@# The lock's pins where they overlap (mcp, pydantic): the time server runs on the SDK we test against.
	$(PEERS)/time/bin/python -m pip install --quiet --disable-pip-version-check -c requirements.lock mcp-server-time==$(PEER_TIME)
	@touch $@

$(PEERS)/git/.installed-$(PEER_GIT):
	@test -x $(PEERS)/git/bin/python || $(PYTHON) -m venv $(PEERS)/git
	$(PEERS)/git/bin/python -m pip install --quiet --disable-pip-version-check -c requirements.lock \
	  mcp-server-git==$(PEER_GIT) $(PEER_GIT_DEPS)
	@touch $@

peers: $(STAMP) peer-npm peer-time peer-git
	@mkdir -p $(PEERS)/files $(PEER_OUT)
	$(BIN)/wismo tokens --json --call echo '{"message": "Where is my order?"}' -- $(PEER_BIN)/mcp-server-everything > $(PEER_OUT)/everything.json
	$(BIN)/wismo tokens --json --call read_graph '{}' -- $(PEER_BIN)/mcp-server-memory > $(PEER_OUT)/memory.json
	$(BIN)/wismo tokens --json -- $(PEER_BIN)/mcp-server-filesystem $(PEERS)/files > $(PEER_OUT)/filesystem.json
	@# UTC: the time server names the local timezone in its descriptions, which would make the count machine-dependent.
	$(BIN)/wismo tokens --json -- $(PEERS)/time/bin/mcp-server-time --local-timezone UTC > $(PEER_OUT)/time.json
	$(BIN)/wismo peers outputs/peers.json \
	  "@modelcontextprotocol/server-everything $(PEER_NPM)=$(PEER_OUT)/everything.json" \
	  "@modelcontextprotocol/server-memory $(PEER_NPM)=$(PEER_OUT)/memory.json" \
	  "@modelcontextprotocol/server-filesystem $(PEER_NPM)=$(PEER_OUT)/filesystem.json" \
	  "mcp-server-time $(PEER_TIME) (PyPI)=$(PEER_OUT)/time.json"

## clean: remove generated outputs, a failed build's staging folder included (keeps .venv)
clean:
	find outputs -mindepth 1 ! -name .gitkeep -exec rm -rf {} +
	rm -rf .outputs.building-*
