# Two entry points: `make run` (set up + start the app on a bundled sample) and `make test`
# (`make test-fast`: the quick subset for iteration).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# Offline defaults for what make starts (the package itself never sets environment variables):
# litellm's bundled model map, and tiktoken's BPE files from litellm's wheel (set by the package
# for the one call that loads them when TIKTOKEN_CACHE_DIR is unset).
export LITELLM_LOCAL_MODEL_COST_MAP ?= True

.PHONY: run test test-fast setup browser clean

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

# The same command pip users run: `context-inspector app` (flags in inspector/bundled.py).
run: $(STAMP)
	$(BIN)/context-inspector app --port $${PORT:-8501}

test: $(STAMP) browser
	$(BIN)/python -m pytest -q

# Everything but the app, notebooks, mypy, fuzzing and the robustness batteries (marked slow in tests/conftest.py).
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow and not browser"

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

# The notebooks are ordinary notebooks: edit and run them in Jupyter, then clear outputs (and any
# saved widget state) before committing; tests/notebooks/test_notebooks.py refuses notebooks with outputs.
.PHONY: notebooks-clean
notebooks-clean: $(STAMP)
	$(BIN)/python -m nbconvert --clear-output --inplace --log-level=WARN \
	  --ClearMetadataPreprocessor.enabled=True --ClearMetadataPreprocessor.preserve_cell_metadata_mask=tags \
	  --ClearMetadataPreprocessor.preserve_nb_metadata_mask=kernelspec \
	  --ClearMetadataPreprocessor.preserve_nb_metadata_mask=language_info notebooks/*.ipynb
