# symnb: `make demo` sets everything up and runs the main job; `make test` runs the tests.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip

.PHONY: demo lab test lint format bench clean docs mutate

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

# One stamp per set of extras, redone when pyproject.toml changes.
$(VENV)/.stamp-%: pyproject.toml | $(BIN)/python
	$(PIP) install -q -e ".[$*]"
	touch $@

# The main job: execute the tour notebook headlessly into build/tour.html.
demo: $(VENV)/.stamp-demo,notebook
	@mkdir -p build
	$(BIN)/jupyter nbconvert --to html --execute --ExecutePreprocessor.timeout=600 \
		--ExecutePreprocessor.kernel_name=python3 --output-dir build --output tour \
		notebooks/00_tour.ipynb
	@echo "the tour, with every output, is in build/tour.html"

lab: $(VENV)/.stamp-demo,notebook
	$(BIN)/jupyter lab --notebook-dir=notebooks

test: $(VENV)/.stamp-test
	$(BIN)/python -m pytest

lint: $(VENV)/.stamp-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(VENV)/.stamp-test
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# The peers (numexpr, PyTensor, JAX, PyTorch CPU) come from the bench extra; one that fails to
# install is reported by the suite as not run.
$(VENV)/.stamp-bench: pyproject.toml | $(BIN)/python
	$(PIP) install -q -e .
	$(PIP) install -q -e ".[bench]" || echo "make bench: not every peer installed; the suite skips the absent ones"
	touch $@

bench: $(VENV)/.stamp-bench
	$(BIN)/python -m benchmarks

# Mutation testing of the modules listed under [tool.mutmut] in pyproject.toml (each mutant
# runs the tests that cover the mutated line); about 20-30 minutes on 2 cores.
mutate: $(VENV)/.stamp-mutate
	rm -rf mutants
	$(BIN)/mutmut run --max-children 2
	$(BIN)/mutmut results

docs: $(VENV)/.stamp-test
	$(BIN)/python -m symnb.catalogue

clean:
	rm -rf $(VENV) build dist mutants *.egg-info .pytest_cache .ruff_cache .hypothesis symnb/backends/c/_runner*.so
