# Two commands do everything on a fresh machine: `make book` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
# A copy of the requirements last installed into .venv.
STAMP  := $(VENV)/.requirements.txt
NB     ?= $(wildcard notebooks/[0-9][0-9]_*.ipynb)
# Progress bars are for people; the book, the tests and the committed outputs stay clean.
export TQDM_DISABLE := 1
export PYTHONHASHSEED := 0

.PHONY: venv book test bench execute badges clean

venv: $(STAMP)

# Reinstall only when requirements.txt changed since the last install.
$(STAMP): requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements.txt
	$(PY) -m pip check
	$(PY) -m ipykernel install --sys-prefix --name python3 > /dev/null
	cp requirements.txt $(STAMP)

# Execute every notebook (cached in _build/.jupyter_cache) and build _build/html.
# -W -n --keep-going: any warning, and any failing cell, fails the build. Then check the built site.
book: venv
	$(VENV)/bin/jupyter-book build . -W -n --keep-going
	RC_REQUIRE_SITE=1 $(PY) -m pytest -q -p no:cacheprovider tests/test_site.py

# Unit tests and conventions, every notebook under nbval (lax) and under papermill with another SEED.
test: venv
	$(PY) -m pytest -p no:cacheprovider tests $(NB) --nbval-lax --nbval-sanitize-with tests/nbval_sanitize.cfg

# Wall time of every notebook against its budget, and of a cold and a warm `make book`.
bench: venv
	$(PY) tests/tools/bench.py $(NB)

# Re-execute notebooks in place in the pinned kernel (their committed outputs): make execute NB=notebooks/02_....ipynb
execute: venv
	$(PY) tests/tools/execute.py $(NB)

# Rewrite every notebook's Colab badge from repository.url in _config.yml.
badges: venv
	$(PY) tests/tools/badges.py $(NB)

clean:
	rm -rf _build
