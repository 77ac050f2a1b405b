# Two entry points: `make run` (set up + start the app on a bundled sample) and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

export LITELLM_LOCAL_MODEL_COST_MAP ?= True

.PHONY: run test setup browser clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

setup: $(STAMP)

# Debian's chromium for the real-browser tests (playwright cannot download browsers here).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -q && apt-get install -y -q chromium; \
	  else echo "chromium missing: browser tests will skip (run as root to install)"; fi; }

run: $(STAMP)
	$(BIN)/streamlit run app.py --server.headless true --server.address 127.0.0.1 \
	  --server.port $${PORT:-8501} --browser.gatherUsageStats false

test: $(STAMP) browser
	$(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) .pytest_cache

# Mutation testing of the engine core and secret masking (slow: not part of `make test` or CI).
# mutmut runs, for each mutant, only the tests of the selection in pyproject [tool.mutmut] that
# execute the mutated function. MUTANTS narrows the run, e.g. `make mutation MUTANTS='inspector.redact*'`.
MUTANTS ?= inspector.engine* inspector.redact*
.PHONY: mutation
mutation: $(STAMP)
	env -u PYTHONPATH $(BIN)/mutmut run --max-children $${JOBS:-1} $(foreach m,$(MUTANTS),"$(m)")
	$(BIN)/mutmut results | tail -n 60
