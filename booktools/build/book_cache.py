"""`make book`, first step: execute the notebooks that the book's cache lacks, two at a time, into
_build/.jupyter_cache, exactly as myst-nb's cache mode would one after another; `jupyter-book build` then finds
every one of them there. This halves a cold build on two cores (each notebook uses one thread).

`make test` fills the same cache from its nbval run (tests/conftest.py, `--book-cache`): a notebook whose every
cell passed under nbval is stored with the outputs nbval checked, so `make book` after `make test` runs nothing.

A notebook that fails is not cached and is reported; the build then executes it itself and fails with its usual
message, so a broken assert still fails `make book`. Unchanged notebooks are matched by their code and metadata,
as myst-nb matches them, and are not run again.
Usage: python -m booktools.build.book_cache [--jobs 2] [notebooks/NN_topic.ipynb ...]   (default: every chapter)
"""

import argparse
import fcntl
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat
from jupyter_cache import get_cache
from jupyter_cache.base import CacheBundleIn
from jupyter_cache.executors.utils import single_nb_execution

from booktools.settings import NOTEBOOKS, ROOT, headless, load_config

# where jupyter-book keeps it when _config.yml names no other path
CACHE = ROOT / "_build" / ".jupyter_cache"


def execute(path: Path) -> tuple:
    """Run one notebook as myst-nb does (in its own folder, the book's timeout, no errors allowed)."""
    headless()
    nb = nbformat.read(path, as_version=4)
    options = load_config()["execute"]
    result = single_nb_execution(
        nb,
        cwd=str(path.parent),
        timeout=options["timeout"],
        allow_errors=options["allow_errors"],
        meta_override=True,
    )
    error = (
        f"{type(result.err).__name__}: {str(result.err).strip().splitlines()[-1][:200]}"
        if result.err
        else None
    )
    return path, nbformat.writes(nb), result.time, error


def store(
    cache_path: Path, path: Path, nb: nbformat.NotebookNode, seconds: float
) -> None:
    """Cache `nb`, the executed notebook at `path`, as myst-nb would; one writer at a time (the test workers)."""
    cache_path.mkdir(parents=True, exist_ok=True)
    with open(cache_path.parent / ".jupyter_cache.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        cache = get_cache(str(cache_path))
        record = cache.add_nb_to_project(str(path))
        cache.cache_notebook_bundle(
            CacheBundleIn(nb, record.uri, data={"execution_seconds": seconds}),
            check_validity=False,
            overwrite=True,
        )


def missing(cache, paths: list) -> list:
    """The notebooks the cache has no match for."""
    out = []
    for path in paths:
        try:
            cache.match_cache_notebook(nbformat.read(path, as_version=4))
        except KeyError:
            out.append(path)
    return out


def fill(cache_path: Path, paths: list, jobs: int = 2) -> dict:
    """Execute and cache the notebooks the cache lacks; return {name: None if cached, else the error}."""
    cache = get_cache(str(cache_path))
    todo = missing(cache, paths)
    outcome = {}
    if todo:
        print(f"book cache: executing {len(todo)} notebook(s), {jobs} at a time")
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for path, text, seconds, error in pool.map(execute, todo):
            outcome[path.name] = error
            if error:  # left for the build, which runs it again and reports the failure in its own words
                print(
                    f"  {path.name}: FAILED ({error}); the build will run it and report"
                )
                continue
            store(cache_path, path, nbformat.reads(text, as_version=4), seconds)
            print(f"  {path.name}: {seconds:.0f} s, cached")
    return outcome


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("notebooks", nargs="*", type=Path)
    ap.add_argument(
        "--jobs", type=int, default=2, help="notebooks executed at a time (default 2)"
    )
    args = ap.parse_args()
    if not fill(CACHE, [p.resolve() for p in args.notebooks] or NOTEBOOKS, args.jobs):
        print("book cache: every notebook is cached")


if __name__ == "__main__":
    main()
