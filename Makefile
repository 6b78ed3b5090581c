# Two commands do everything on a fresh machine: `make book` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
# A copy of the requirements last installed into .venv.
STAMP  := $(VENV)/.requirements.txt
NB     ?= $(wildcard notebooks/[0-9][0-9]_*.ipynb)
# Given on the command line (make test NB=notebooks/05_pre_vs_post_norm.ipynb), NB narrows the tests parametrised by
# chapter to those chapters (tests/conftest.py reads RC_CHAPTERS).
CHAPTERS := $(if $(filter command line,$(origin NB)),$(NB))
# Every target that takes NB first checks that each names a notebook, and says so in one sentence if not.
define require_nb
@for f in $(NB); do test -f "$$f" || { echo "No notebook $$f: give NB=notebooks/NN_topic.ipynb, one of: $(notdir $(wildcard notebooks/[0-9][0-9]_*.ipynb))"; exit 2; }; done
endef
# Set whenever a machine runs the notebooks (the notebooks read it): no progress bars, so the book and the
# committed outputs stay clean, and a hidden cell tries each widget's function at an extreme setting.
export RC_HEADLESS := 1

.PHONY: venv copies copies-check book browser browser-deps pdf edition test check lint format colab-check newest bench seeds execute badges student sync grade clean

venv: $(STAMP)

# Reinstall only when requirements.txt changed since the last install.
$(STAMP): requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements.txt
	$(PY) -m pip check
	$(PY) -m ipykernel install --sys-prefix --name python3 > /dev/null
	cp requirements.txt $(STAMP)

# Execute every notebook (cached in _build/.jupyter_cache; the ones not cached yet two at a time, by
# booktools/build/book_cache.py) and build _build/html.
# -W -n --keep-going: any warning, and any failing cell, fails the build. Then check the built site.
# SOLUTIONS=0: instead, the book without its solutions, for a course to publish (booktools/build/no_solutions.py),
# from the same executed notebooks, by the same build: its sources in _build/no-solutions, the site in
# _build/html-no-solutions (the normal build is left alone), then checked for any solution left in it;
# BASEURL= the address the course publishes it at.
SOLUTIONS ?= 1
book: venv copies
	$(PY) -m booktools.build.book_cache
ifeq ($(SOLUTIONS),0)
	$(PY) -m booktools.build.no_solutions $(if $(BASEURL),--baseurl "$(BASEURL)")
	RC_NO_SOLUTIONS_SITE=1 $(PY) -m pytest -q -p no:cacheprovider tests/test_no_solutions.py -k built_site
else
	$(VENV)/bin/jupyter-book build . -W -n --keep-going
	RC_REQUIRE_SITE=1 $(PY) -m pytest -q -p no:cacheprovider tests/test_site.py
endif

# The built site in a real browser (Debian's Chromium, driven by Playwright): every page of the table of contents
# and the search page, with screenshots in _build/screenshots (light) and _build/screenshots/dark. The files the
# pages load from CDNs (the widgets' embedder; MathJax is the site's own) come from an npm mirror, so it runs
# offline. Playwright and pypdf (into .venv) and the mirror are installed again only when their pins change;
# Chromium when it is missing. Two workers, one Chromium each; all checks of one page run on one worker
# (tests/conftest.py), so each page is opened once.
BROWSER_STAMP := $(VENV)/.browser-requirements.txt
CDN_MIRROR    := $(VENV)/cdn-mirror

browser: browser-deps
	RC_BROWSER=1 $(PY) -m pytest -p no:cacheprovider -n 2 --dist loadscope tests/test_browser.py

# The whole book as one PDF, printed offline from the built site by the same Chromium (booktools/build/pdf.py) into
# _build/pdf/, read back by tests/test_pdf.py, and only then published: copied to _build/html/residual-connections.pdf
# and put in every page's download menu. After `make book` (about 3 minutes); CI builds it for the site it deploys.
pdf: browser-deps
	$(PY) -m booktools.build.pdf
	RC_PDF=1 $(PY) -m pytest -q -p no:cacheprovider tests/test_pdf.py
	$(PY) -m booktools.build.pdf --publish

browser-deps: venv
	cmp -s tests/browser/requirements.txt $(BROWSER_STAMP) || { \
	  $(PY) -m pip install -q --disable-pip-version-check -r tests/browser/requirements.txt && $(PY) -m pip check && \
	  cp tests/browser/requirements.txt $(BROWSER_STAMP); }
	cmp -s tests/browser/package-lock.json $(CDN_MIRROR)/.package-lock.json.installed || { \
	  mkdir -p $(CDN_MIRROR) && cp tests/browser/package.json tests/browser/package-lock.json $(CDN_MIRROR)/ && \
	  npm ci --prefix $(CDN_MIRROR) --ignore-scripts --no-audit --no-fund && \
	  cp tests/browser/package-lock.json $(CDN_MIRROR)/.package-lock.json.installed; }
	test -x /usr/bin/chromium || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; }

# Lint, conventions, claims, tools, coursework, FULL mode on fake data, every notebook under nbval (lax), and every
# student version alone under another SEED, graded (tests/test_notebooks_run.py). Two workers, one per core (each notebook runs on one thread);
# --dist loadscope keeps the cells of one notebook, which nbval runs in one kernel, together and in order; every
# other parametrised test is a unit of its own (tests/conftest.py), so one chapter's runs spread over both cores.
# --book-cache: each notebook that passes nbval goes into the book's execution cache, so `make book` reuses the run.
test: venv lint copies
	$(require_nb)
	RC_CHAPTERS="$(CHAPTERS)" $(PY) -m pytest -p no:cacheprovider -n 2 --dist loadscope tests $(NB) --nbval-lax --nbval-cell-timeout=600 \
	  --nbval-sanitize-with tests/nbval_sanitize.cfg --book-cache _build/.jupyter_cache

# ruff on every .py file and notebook: pyflakes-class errors, import order, and the format (pyproject.toml); and
# actionlint on the CI workflow.
lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/actionlint .github/workflows/*.yml

# Rewrite every .py file and notebook in ruff's format (then `make student` for the student copies).
format: venv
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

# The author's fast loop, in seconds: lint, the notebooks' conventions, the claims test, and the site tests if
# the site is built. It runs no notebook.
check: lint
	$(PY) -m pytest -q -p no:cacheprovider tests/test_conventions.py tests/test_claims.py tests/test_shared.py tests/test_site.py

# Every chapter's student version, alone in an empty folder as in `make test`, in a second venv pinned to Colab's
# package versions (tests/colab-requirements.txt): its asserts hold and only the untouched stubs raise. Not graded
# here: instructors grade in .venv, with the book's pins, and `make test` checks that.
COLAB_VENV  := .venv-colab
COLAB_STAMP := $(COLAB_VENV)/.requirements.txt

$(COLAB_STAMP): tests/colab-requirements.txt
	test -x $(COLAB_VENV)/bin/python || $(PYTHON) -m venv $(COLAB_VENV)
	$(COLAB_VENV)/bin/python -m pip install -q --disable-pip-version-check -r tests/colab-requirements.txt
	$(COLAB_VENV)/bin/python -m pip check
	$(COLAB_VENV)/bin/python -m ipykernel install --sys-prefix --name python3 > /dev/null
	cp tests/colab-requirements.txt $(COLAB_STAMP)

colab-check: $(COLAB_STAMP)
	RC_COLAB_CHECK=1 $(COLAB_VENV)/bin/python -m pytest -p no:cacheprovider -n 2 --dist loadscope -m "not grading" \
	  tests/test_notebooks_run.py

# Every notebook (nbval) and every student version (graded, another SEED) against the NEWEST releases of what they
# import (tests/newest-requirements.txt, unpinned): the weekly CI job. Not part of .ci/run: it needs the newest
# releases, which the package registries of CI may not have yet.
NEWEST_VENV := .venv-newest

newest:
	rm -rf $(NEWEST_VENV) && $(PYTHON) -m venv $(NEWEST_VENV)
	$(NEWEST_VENV)/bin/python -m pip install -q --disable-pip-version-check -r tests/newest-requirements.txt
	$(NEWEST_VENV)/bin/python -m ipykernel install --sys-prefix --name python3 > /dev/null
	$(NEWEST_VENV)/bin/python -m pip list --format=freeze | grep -iE '^(torch|numpy|matplotlib|scikit-learn|ipywidgets)=='
	$(NEWEST_VENV)/bin/python -m pytest -p no:cacheprovider -n 2 --dist loadscope tests/test_notebooks_run.py $(NB) \
	  --nbval-lax --nbval-cell-timeout=600 --nbval-sanitize-with tests/nbval_sanitize.cfg

# Wall time of every notebook against its budget, of a cold and a warm `make book`, and of `make test` in passes
# (WITH_CI=1: also of .ci/run). Run it on an idle machine.
bench: venv
	$(require_nb)
	$(PY) -m booktools.measure.bench $(NB) $(if $(WITH_CI),--ci)

# Every chapter under N seeds (1000, 2000, ...), two at a time, with each assert's slack; outside CI (how long: the
# reproducibility page). Records in _build/seeds/, condensed into book/sweeps/ (committed); from those the
# table on the reproducibility page and the min slack column of every chapter's claims-and-controls table.
N ?= 30
seeds: venv
	$(require_nb)
	$(PY) -m booktools.measure.seeds -n $(N) $(NB)
	$(PY) -m booktools.measure.seeds --report

# Re-execute notebooks in place in the pinned kernel (their committed outputs): make execute NB=notebooks/02_....ipynb
execute: venv
	$(require_nb)
	$(PY) -m booktools.execute $(NB)

# Rewrite every notebook's Colab badge, and the Colab links in book/*.md, from repository.url in _config.yml.
badges: venv
	$(require_nb)
	$(PY) -m booktools.build.badges $(NB)

# Copy each shared snippet (notebooks/shared/NAME.py: self_check, the figure style, the digits split, the CIFAR-10 loader) into the
# notebook cells tagged shared:NAME, and each chapter cell tagged teaches:NAME (a model a later chapter reuses) into the
# cells tagged taught:NAME; then rewrite the student versions. Re-execute the notebooks it names.
sync: venv
	$(PY) -m booktools.build.sync
	$(PY) -m booktools.build.student

# Colab copies (the chapters' markdown in plain CommonMark) in notebooks/colab/, and from them the student
# versions (solutions replaced by stubs, outputs cleared) in notebooks/student/. `make copies` (which `make test` and
# `make book` run first) remakes the two copies of each chapter that changed since they were made, or whose tools
# did; one run of student.py makes both (a pattern rule with two targets makes them together). The copies are
# committed, since the Colab badges open them: CI remakes them all once and fails if that changes one
# (`make copies-check`).
CHAPTER_FILES := $(wildcard notebooks/[0-9][0-9]_*.ipynb)
COPIES        := $(foreach nb,$(notdir $(CHAPTER_FILES)),notebooks/colab/$(nb) notebooks/student/$(nb))
COPY_TOOLS    := $(wildcard booktools/build/colab.py booktools/build/student.py booktools/build/badges.py \
                   booktools/settings.py book/_ext/author_year_labels.py book/references.bib) _config.yml

copies: $(COPIES)

notebooks/colab/%.ipynb notebooks/student/%.ipynb: notebooks/%.ipynb $(COPY_TOOLS) | $(STAMP)
	$(PY) -m booktools.build.student $<

copies-check: venv
	$(PY) -m booktools.build.student
	git diff --exit-code --stat -- notebooks/colab notebooks/student || { \
	  echo "The committed Colab copies or student versions are stale: run make student and commit them."; exit 1; }

student: venv
	$(require_nb)
	$(PY) -m booktools.build.student $(NB)

# Tag an edition a course can pin, TAG=vYYYY.MM: a commit of its own (the branch does not move) whose Colab and
# student-version links open the tag (booktools/build/edition.py). Then: git push origin TAG.
edition: venv
	$(PY) -m booktools.build.edition $(TAG)

# Grade a folder of submitted notebooks of one chapter: make grade SUBMISSIONS=dir CHAPTER=02_identity_and_zero_init
# [HIDDEN=folder of your own hidden tests, instead of the public booktools/grading/hidden]
# [REFERENCE=notebook with your reference solutions, instead of notebooks/NN_topic.ipynb]
# [SECRET='a phrase only you know': the hidden tests draw their inputs from it; make hands it to the grader in
#  the environment, not on a command line others can see]
# [LMS=canvas or LMS=moodle: also a CSV for that gradebook's import; ASSIGNMENT="its name there"]
# [SANDBOX=0: no sandbox, only inside a throwaway container without network (see booktools/grading/sandbox.py)]
# [RUN_FLAGGED=1: run the answers the scan held for review (they score 0 otherwise); only after reading them]
grade: venv
	@test -n "$(SUBMISSIONS)" -a -n "$(CHAPTER)" || { echo "usage: make grade SUBMISSIONS=folder CHAPTER=NN_topic"; exit 2; }
	$(PY) -m booktools.grading "$(SUBMISSIONS)" --chapter "$(CHAPTER)" $(if $(HIDDEN),--hidden "$(HIDDEN)") \
	  $(if $(REFERENCE),--reference "$(REFERENCE)") \
	  $(if $(LMS),--lms "$(LMS)") $(if $(ASSIGNMENT),--assignment "$(ASSIGNMENT)") \
	  $(if $(JOBS),--jobs "$(JOBS)") $(if $(TIMEOUT),--timeout "$(TIMEOUT)") \
	  $(if $(filter 0,$(SANDBOX)),--no-sandbox) $(if $(filter 1,$(RUN_FLAGGED)),--run-flagged)

clean:
	rm -rf _build
