"""Every number in a chapter's prose is backed by something a reader can check.

A number written with digits in a markdown cell, a figure's caption (cell metadata `mystnb.figure.caption`) or
the front page's text must be one of:
1. a threshold an `assert` checks: a literal in an assert of the notebook, or a literal assigned to a name an
   assert uses ("90 %" matches 0.9 or 90);
2. in a sentence that carries a citation (`{cite}`): a paper's figure, quoted from the paper;
3. in a sentence that labels it as this run's printout ("in the run shown, ..."): the committed outputs show
   it, and the reader's own run may differ;
4. allowed by its form (the allow-list below): equations and code, years, numbered references to figures,
   tables, chapters and exercises, model names such as ResNet-56, and a setting written in the code (a depth,
   a width, a learning rate), unless it is shaped like a result (a percentage, a factor).

It will be imperfect; its job is to make every new number a decision. A number spelled out ("ten times") is
not caught: write it with digits and back it.
"""

import ast
import re
from pathlib import Path

import pytest

from booktools.measure import claims_table
from booktools.measure.seeds import code_hash
from booktools.settings import INTRO
from conftest import NOTEBOOKS, read_notebook

# --- what is stripped before numbers are looked for: not prose, or numbers that are names -------------------
NOT_PROSE = [
    re.compile(r"```.*?```", re.S),  # fenced blocks (code, directives' options)
    re.compile(r"\$\$.*?\$\$", re.S),  # display equations: constants in equations
    re.compile(r"(?<!\\)\$[^$\n]+?(?<!\\)\$"),  # inline equations
    re.compile(r"`[^`\n]*`"),  # inline code, and the targets of {cite}/{term} roles
    re.compile(r"\]\([^)\s]*\)"),  # link targets
    re.compile(r"<!--.*?-->", re.S),  # comments
    re.compile(r"https?://\S+"),  # bare addresses
    re.compile(
        r"^\s*(#+\s*(\d+(\.\d+)*\.?)?|\d+\.\s)", re.M
    ),  # heading and list numbers
    re.compile(r"\*\*Time to run:\*\*[^\n]*"),  # written by `make bench`
]
ALLOWED_FORMS = [
    re.compile(r"\b(1[89]|20)\d\d[a-z]?\b"),  # years (2016, 2016a)
    re.compile(
        r"\b(Figures?|Figs?\.|Tables?|Chapters?|Exercises?|Sections?|§|Lemmas?|Theorems?|"
        r"Eqs?\.|Equations?|Appendix|Algorithm|Part)\s*\d+(\.\d+)*([–-]\d+)?(\s*(and|,)\s*\d+)*",
        re.I,
    ),
    re.compile(r"\b[A-Za-z][A-Za-z]*-\d+\b"),  # model names: ResNet-56, plain-33
    re.compile(r"\b\d+\s*[×x]\s*\d+\b(?!\s*%)"),  # shapes: 3×3, 32×32
    re.compile(r"\b\d+(st|nd|rd|th)\b"),  # ordinals
    re.compile(r"\b[A-Z]+\d+\b"),  # names such as MNIST1D, L2
    re.compile(
        r"\b\d[\d,]*\s+(training |test |held-out |handwritten )*(images|digits|pixels|classes)\b"
    ),  # the data
    re.compile(r"\b\d+-core\b"),  # the machine
    re.compile(
        r"\b\d+(\s+of\s+\d+)?\s+seeds\s+swept\b|\b\d+-seed\s+sweep"
    ),  # the seed tool's sweep
]
NUMBER = re.compile(
    r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?:[eE][−-]?\d+)?(?![\w])"
)
RESULT_SHAPED = re.compile(r"^\s*(%|pp\b|percent|×|times\b|-fold|fold\b|x\b)")
RUN_LABEL = re.compile(r"\bin\s+the\s+runs?\s+shown\b", re.I)
SENTENCE_END = re.compile(
    r"(?<=[.!?:])\s+(?=[A-Z*(\[\"“])|\n\s*[-*]\s+|\n\s*\n|\n(?=\|)"
)


def _parse(value: str) -> float:
    return float(value.replace(",", "").replace("−", "-"))


# --- what the code backs ----------------------------------------------------------------------------------
def _tree(source: str) -> ast.AST | None:
    lines = [
        "pass" if line.lstrip().startswith(("%", "!")) else line
        for line in source.splitlines()
    ]
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError:
        return None


def _constants(node: ast.AST) -> set:
    """Numeric literals under `node`, with signs and simple arithmetic (1e-3, 2 / 3, 10 ** -9) folded."""
    found = set()
    for sub in ast.walk(node):
        if (
            isinstance(sub, ast.Constant)
            and isinstance(sub.value, (int, float))
            and not isinstance(sub.value, bool)
        ):
            found.add(float(sub.value))
        elif isinstance(sub, (ast.BinOp, ast.UnaryOp)):
            try:
                value = eval(
                    compile(ast.Expression(sub), "<const>", "eval"),
                    {"__builtins__": {}},
                )
                if isinstance(value, (int, float)):
                    found.add(float(value))
            except Exception:
                pass
    return found


def backed_numbers(code_sources: list) -> tuple[set, set]:
    """(thresholds the asserts check, every literal written in the code)."""
    trees = [t for t in (_tree(s) for s in code_sources) if t is not None]
    assigned, asserted_names, thresholds, literals = {}, set(), set(), set()
    for tree in trees:
        literals |= _constants(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Assert):
                thresholds |= _constants(node.test)
                asserted_names |= {
                    n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)
                }
            elif (
                isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None
            ):
                targets = (
                    node.targets if isinstance(node, ast.Assign) else [node.target]
                )
                for target in targets:
                    for name in ast.walk(target):
                        if isinstance(name, ast.Name):
                            assigned.setdefault(name.id, set()).update(
                                _constants(node.value)
                            )
    for name in asserted_names:
        thresholds |= assigned.get(name, set())
    return thresholds, literals


# --- the check ---------------------------------------------------------------------------------------------
def _matches(value: float, percent: bool, backed: set) -> bool:
    candidates = {value, value / 100} if percent else {value}
    return any(
        abs(c - b) <= 1e-9 * max(1.0, abs(c)) for c in candidates for b in backed
    )


def unsupported(markdown: list, code_sources: list) -> list:
    """Each number in the prose that nothing backs, as 'number «sentence»'."""
    thresholds, literals = backed_numbers(code_sources)
    problems = []
    for text in markdown:
        for sentence in SENTENCE_END.split(text):
            if not sentence or "{cite" in sentence or RUN_LABEL.search(sentence):
                continue
            prose = sentence
            for pattern in NOT_PROSE + ALLOWED_FORMS:
                prose = pattern.sub(" ", prose)
            for m in NUMBER.finditer(prose):
                value, after = _parse(m.group(0)), prose[m.end() :]
                result_shaped = bool(RESULT_SHAPED.match(after))
                percent = bool(re.match(r"^\s*(%|pp\b|percent)", after))
                if _matches(value, percent, thresholds):
                    continue
                if not result_shaped and _matches(value, False, literals):
                    continue  # a setting written in the code
                problems.append(
                    f"{m.group(0)}{after[:3].rstrip()} «{' '.join(sentence.split())[:160]}»"
                )
    return problems


def notebook_parts(path: Path) -> tuple[list, list]:
    nb = read_notebook(path)
    # the claims-and-controls table's `min slack` column is the seed tool's, checked below, not a claim of the prose
    markdown = [
        _without_slack(c.source)
        if c.source.lstrip().startswith(claims_table.HEADING)
        else c.source
        for c in nb.cells
        if c.cell_type == "markdown"
    ]
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    captions = [
        c.metadata["mystnb"]["figure"].get("caption", "")
        for c in nb.cells
        if "figure" in c.metadata.get("mystnb", {})
    ]
    return markdown + captions, code


def _without_slack(source: str) -> str:
    try:
        rows = claims_table.parse(source)
    except ValueError:
        return source
    # nor its `#` column, which numbers the Summary's bullets
    source = claims_table.write_slack(source, ["–"] * len(rows))
    return re.sub(r"^(\s*\|)\s*[\d, ]+\s*\|", r"\1 – |", source, flags=re.M)


def intro_parts() -> tuple[list, list]:
    """The front page is a MyST notebook: its code cells and the text between them."""
    text = INTRO.read_text().split("---", 2)[2]  # past the front matter
    cells = re.split(r"```\{code-cell\}[^\n]*\n(.*?)```", text, flags=re.S)
    markdown = cells[0::2]
    # past each cell's options
    code = [re.sub(r"\A---\n.*?\n---\n", "", c, flags=re.S) for c in cells[1::2]]
    # The map's last column is written by `make bench`: not a claim of the prose.
    markdown = [re.sub(r"^\| \[.*\| \d+ s \|$", "", m, flags=re.M) for m in markdown]
    return markdown, code


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_number_in_the_prose_is_backed(path):
    problems = unsupported(*notebook_parts(path))
    assert not problems, (
        f"{path.name}: numbers in the prose that no assert, citation or 'in the run shown' "
        "label backs (see tests/test_claims.py):\n  " + "\n  ".join(problems)
    )


def test_every_number_on_the_front_page_is_backed():
    problems = unsupported(*intro_parts())
    assert not problems, "book/intro.md: unbacked numbers:\n  " + "\n  ".join(problems)


# --- the check itself can fail ------------------------------------------------------------------------------
CODE = [
    "WIDTH, DEPTHS = 64, [9, 33]\nplain_error = 0.23\nMARGIN = 0.1\nassert plain_error > MARGIN, 'x'\n"
    "assert gap < 2e-2\n"
]


@pytest.mark.parametrize(
    "sentence",
    [
        "The plain net ends at 37.3 % training error.",
        "Deleting a block costs 5 pp.",
        "The residual stream grows 26× over the stack.",
        "Its gradient is 0.44 of the first layer's.",
    ],
)
def test_an_unbacked_number_fails(sentence):
    assert unsupported([sentence], CODE), f"the claims check let through: {sentence}"


@pytest.mark.parametrize(
    "sentence",
    [
        "The plain net's error stays above 10 % for every seed.",  # an asserted threshold (0.1)
        "Deleting a block costs less than 2 pp.",  # an asserted threshold (2e-2)
        "He et al. report 6.43 % for ResNet-110 {cite}`he2016deep`.",  # cited
        "In the run shown, the plain net ends at 37.3 % training error.",  # labelled as this run's printout
        "A 33-layer net of width 64, as in Figure 2 of chapter 3 (2016).",  # forms and settings
        "The loss is $\\mathcal{L} = 0.5\\,\\|y - 3\\|^2$ and `lr = 0.05`.",  # equations and code
    ],
)
def test_a_backed_number_passes(sentence):
    assert not unsupported([sentence], CODE)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_a_number_inserted_into_a_chapter_is_caught(path):
    markdown, code = notebook_parts(path)
    inserted = "After training, the deeper net ends at 37.25 % error."
    assert any(inserted in p for p in unsupported(markdown + [inserted], code))


# --- the claims-and-controls table (booktools/measure/claims_table.py) ---------------------------------------------
def table_problems(nb, sweep: dict | None, current: bool) -> list:
    """What is wrong with a chapter's claims-and-controls table, one sentence each."""
    i, summary = claims_table.table_cell(nb), claims_table.summary_cell(nb)
    if i is None:
        return [f"no cell starts with '{claims_table.HEADING}'"]
    if summary is None or not claims_table.follows_summary(nb):
        return [
            "the table's cell must close the Summary: after '## Summary', before any other heading"
        ]
    try:
        rows = claims_table.parse(nb.cells[i].source)
    except ValueError as e:
        return [str(e)]
    problems, asserts = [], claims_table.chapter_asserts(nb)
    bullets = claims_table.summary_bullets(nb)
    named = {b for row in rows for b in row.bullets}
    problems += [
        f"Summary bullet {b} has no row"
        for b in range(1, bullets + 1)
        if b not in named
    ]
    problems += [
        f"a row names bullet {b}, but the Summary has {bullets}"
        for b in sorted(named)
        if not 1 <= b <= bullets
    ]
    for row in rows:
        if not row.asserts and "{cite" not in row.claim:
            problems.append(
                f"'{row.claim}': a `cited` row needs a {{cite}} in its claim"
            )
        found = []
        for snippet in row.asserts:
            hits = [a for a in asserts if claims_table.matches(snippet, a.test)]
            if not hits:
                problems.append(
                    f"'{row.claim}': no assert of the chapter contains `{snippet}`"
                )
            found += hits
        for control in row.controls:
            if control.verdict == "holds" and not any(
                control.tag in a.message for a in found
            ):
                problems.append(
                    f"'{row.claim}': '{control.kind}: {control.value} — holds', but none of the row's asserts has "
                    f"{control.tag} in its message"
                )
            if control.verdict == "holds" and sweep is not None and current:
                tagged = [a.test for a in found if control.tag in a.message]
                n = len(sweep["seeds"])
                ran = [
                    r
                    for r in sweep["asserts"]
                    if r["reached"] == n
                    and any(claims_table.matches(t, r["label"]) for t in tagged)
                ]
                if not ran:
                    problems.append(
                        f"'{row.claim}': the sweep has no record that the {control.tag} assert ran for every seed"
                    )
        expected = claims_table.slack_text(row, sweep, current)
        if row.slack != expected:
            problems.append(
                f"'{row.claim}': `min slack` reads '{row.slack}', the sweep summary says '{expected}' "
                "(run `python -m booktools.measure.seeds --report`)"
            )
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_chapter_has_a_claims_and_controls_table(path):
    sweep = claims_table.load_sweep(path.stem)
    current = sweep is not None and sweep.get("code") == code_hash(path)
    problems = table_problems(read_notebook(path), sweep, current)
    assert not problems, (
        f"{path.name}, its claims-and-controls table:\n  " + "\n  ".join(problems)
    )


def _toy(
    table: str, code: str = "assert a < b, '[init: he] a below b'\nassert c > d\n"
):
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(code),
        nbformat.v4.new_markdown_cell("## Summary\n\n- one\n- two\n"),
        nbformat.v4.new_markdown_cell(
            f"{claims_table.HEADING}\n\n| # | claim | asserts | min slack | controls |\n"
            f"| --- | --- | --- | --- | --- |\n{table}"
        ),
    ]
    return nb


GOOD = "| 1 | a below b | `a < b` | not swept | init: he — holds |\n| 2 | c above d | `c > d` | not swept | none: exact |\n"


def test_a_good_table_passes():
    assert table_problems(_toy(GOOD), None, False) == []


@pytest.mark.parametrize(
    "table, complaint",
    [
        (
            "| 1 | a below b | `a < b` | not swept | init: he — holds |\n",
            "bullet 2 has no row",
        ),
        (GOOD.replace("`c > d`", "`c >= d`"), "no assert of the chapter contains"),
        (
            GOOD.replace("init: he — holds", "init: xavier — holds"),
            "has [init: xavier] in its message",
        ),
        (GOOD.replace("init: he — holds", "init: he — maybe"), "a control reads"),
        (GOOD.replace("| 2 |", "| 3 |"), "the Summary has 2"),
        (
            GOOD.replace("not swept | none", "0.5 | none"),
            "the sweep summary says 'not swept'",
        ),
        (GOOD.replace("`c > d`", "cited"), "needs a {cite}"),
    ],
)
def test_a_bad_table_fails(table, complaint):
    problems = table_problems(_toy(table), None, False)
    assert any(complaint in p for p in problems), problems


def test_the_slack_column_and_the_holds_control_are_read_from_the_sweep():
    sweep = {
        "seeds": [1000, 2000],
        "asserts": [
            {"label": "a < b", "reached": 2, "fired": 0, "min": 0.25, "median": 0.5},
            {"label": "c > d", "reached": 1, "fired": 0, "min": 0.5, "median": 0.5},
        ],
    }
    good = GOOD.replace("| not swept | init", "| 0.25 | init").replace(
        "not swept | none", "reached in 1 of 2 seeds | none"
    )
    assert table_problems(_toy(good), sweep, True) == []
    sweep["asserts"][0]["reached"] = 1
    problems = table_problems(_toy(good), sweep, True)
    assert any("no record that the [init: he] assert ran" in p for p in problems), (
        problems
    )
