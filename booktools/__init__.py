"""The book's tooling, run from the top level as `python -m booktools.<part>.<tool>` behind the make targets.

- build/: what turns the chapters into the site and the copies readers open (sync, colab and student copies,
  badges, editions, the book's execution cache, the nbval plugin that fills it, the PDF);
- grading/: `make grade` (splice, scan, sandbox, cells, judge, lms, the command line), with the course data it
  grades by (hidden/, the hidden tests; mutants/, the answers each hidden test must mark right);
- measure/: `make bench` (run times against the budgets) and `make seeds` (every assert under 30 seeds);
- settings.py: every path, budget, timeout and seed; execute.py: the one place a notebook is run.

The README's map draws the book path and the grading path.
"""
