"""Each chapter's claims-and-controls table: what it showed, which asserts check it, and under what conditions.

The table is a markdown cell right after the chapter's Summary cell:

    ### What this chapter showed, and under what conditions

    | # | claim | asserts | min slack | controls |
    | --- | --- | --- | --- | --- |
    | 1 | a zero-init block is the identity | `torch.equal(residual_out, x)` | exact | none: an exact fact |
    | 2 | ... | `a < b`; `c > d` | 0.12 | init: he — holds; lr: 3e-3 — scoped |

- `#` names the Summary bullet(s) the row backs;
- `asserts` holds backticked snippets, each found (white space aside) in the test of an `assert` of the chapter, or
  the word `cited` for a claim that rests on a paper ({cite} in the claim);
- `min slack` is written by the seed tool (`seeds.py --report`) from the chapter's sweep summary in
  `book/sweeps/`, never by hand;
- `controls` is `none: why`, or `;`-separated `KIND: VALUE — holds` / `KIND: VALUE — scoped`. "holds" means one
  of the row's asserts carries the tag `[KIND: VALUE]` in its message and runs on the page; "scoped" means the
  prose names the condition and the page shows what the other setting gives.

`tests/test_claims.py` checks all of this; the seed tool and the test read tables through this module.
"""

import ast
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

HEADING = "### What this chapter showed, and under what conditions"
COLUMNS = ["#", "claim", "asserts", "min slack", "controls"]
KINDS = ("init", "lr", "optimiser", "norm", "steps", "width", "depth", "data")
CONTROL = re.compile(
    rf"^(?P<kind>{'|'.join(KINDS)}):\s*(?P<value>[^—]+?)\s*—\s*(?P<verdict>holds|scoped)$"
)
SWEEPS = Path(__file__).resolve().parents[2] / "book" / "sweeps"
NOT_SWEPT = "not swept"


@dataclass
class Control:
    kind: str
    value: str
    verdict: str

    @property
    def tag(self) -> str:
        return f"[{self.kind}: {self.value}]"


@dataclass
class Row:
    bullets: list
    claim: str
    asserts: list  # snippets; empty for a cited claim
    slack: str
    controls: list = field(default_factory=list)  # empty for `none: ...`
    none_because: str = ""


@dataclass
class Assert:
    test: str  # the test's source, as written
    message: str  # the message's source ("" if none)


def _cells(line: str) -> list:
    """A table line's cells; `\\|` inside a cell is a literal bar."""
    parts = re.split(r"(?<!\\)\|", line.strip())
    return [p.strip().replace("\\|", "|") for p in parts[1:-1]]


def table_cell(nb) -> int | None:
    """The index of the cell that holds the table, or None."""
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and cell.source.lstrip().startswith(HEADING):
            return i
    return None


def summary_cell(nb) -> int | None:
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and cell.source.lstrip().startswith(
            "## Summary"
        ):
            return i
    return None


def summary_bullets(nb) -> int:
    """How many top-level bullets the Summary has: in the markdown cells from `## Summary` to the table."""
    i, end = summary_cell(nb), table_cell(nb)
    if i is None:
        return 0
    cells = nb.cells[i : end if end is not None and end > i else i + 1]
    return sum(
        len(re.findall(r"^- ", c.source, re.M))
        for c in cells
        if c.cell_type == "markdown"
    )


def follows_summary(nb) -> bool:
    """The table closes the Summary: it comes after `## Summary`, with no other heading between them."""
    i, end = summary_cell(nb), table_cell(nb)
    if i is None or end is None or end <= i:
        return False
    return not any(
        c.cell_type == "markdown" and re.match(r"#{1,3} ", c.source.lstrip())
        for c in nb.cells[i + 1 : end]
    )


def parse(source: str) -> list:
    """The rows of a table cell's source; ValueError with a sentence when it is malformed."""
    lines = [line for line in source.splitlines() if line.lstrip().startswith("|")]
    if len(lines) < 3:
        raise ValueError("the table needs a header, a rule and at least one row")
    if _cells(lines[0]) != COLUMNS:
        raise ValueError(f"the header must be | {' | '.join(COLUMNS)} |")
    rows = []
    for line in lines[2:]:
        cells = _cells(line)
        if len(cells) != len(COLUMNS):
            raise ValueError(f"a row needs {len(COLUMNS)} cells: {line}")
        number, claim, asserts, slack, controls = cells
        try:
            bullets = [int(n) for n in number.split(",")]
        except ValueError:
            raise ValueError(
                f"`#` must name Summary bullets, as `1` or `2, 3`: {line}"
            ) from None
        if asserts == "cited":
            snippets = []
        else:
            snippets = [s.strip().strip("`") for s in asserts.split(";")]
            if not all(re.fullmatch(r"`[^`]+`", s.strip()) for s in asserts.split(";")):
                raise ValueError(
                    f"`asserts` must be backticked snippets separated by `;`, or `cited`: {line}"
                )
        row = Row(bullets, claim, snippets, slack)
        if controls.startswith("none:"):
            row.none_because = controls[5:].strip()
            if not row.none_because:
                raise ValueError(f"`none:` must say why: {line}")
        else:
            for entry in controls.split(";"):
                match = CONTROL.match(entry.strip())
                if not match:
                    raise ValueError(
                        f"a control reads `KIND: VALUE — holds` or `— scoped`, KIND one of {', '.join(KINDS)}; "
                        f"or the cell reads `none: why`: {entry.strip()!r}"
                    )
                row.controls.append(Control(**match.groupdict()))
        rows.append(row)
    return rows


def chapter_asserts(nb) -> list:
    """Every assert in the chapter's code, outside the exercises' solutions and self-checks."""
    found = []
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        if cell.cell_type != "code" or {"solution", "self-check"} & set(tags):
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Assert):
                test = ast.get_source_segment(cell.source, node.test) or ""
                message = (
                    ast.get_source_segment(cell.source, node.msg) or ""
                    if node.msg
                    else ""
                )
                found.append(Assert(test, message))
    return found


def squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def matches(snippet: str, test: str) -> bool:
    return squeeze(snippet) in squeeze(test)


def load_sweep(chapter: str) -> dict | None:
    path = SWEEPS / f"{chapter}.json"
    return json.loads(path.read_text()) if path.exists() else None


def slack_text(row: Row, sweep: dict | None, current: bool) -> str:
    """What the `min slack` cell says, from the chapter's sweep summary."""
    if not row.asserts:
        return "cited"
    if sweep is None or not current:
        return NOT_SWEPT
    n = len(sweep["seeds"])
    landed = [
        a
        for a in sweep["asserts"]
        if any(matches(snippet, a["label"]) for snippet in row.asserts)
    ]
    if not landed:
        return "not reached"
    fired = max(a["fired"] for a in landed)
    if fired:
        return f"fired in {fired} of {n} seeds"
    if min(a["reached"] for a in landed) < n:
        return f"reached in {min(a['reached'] for a in landed)} of {n} seeds"
    slacks = [a["min"] for a in landed if a["min"] is not None]
    return f"{min(slacks):.2g}" if slacks else f"passed {n} of {n}"


def write_slack(source: str, texts: list) -> str:
    """The table cell's source with each row's `min slack` cell replaced by `texts`, in order."""
    out, k = [], 0
    for i, line in enumerate(source.splitlines()):
        if line.lstrip().startswith("|") and not _is_header_or_rule(source, i):
            parts = re.split(r"(?<!\\)\|", line)
            parts[4] = f" {texts[k]} "
            k += 1
            line = "|".join(parts)
        out.append(line)
    return "\n".join(out)


def _is_header_or_rule(source: str, index: int) -> bool:
    table = [
        i for i, line in enumerate(source.splitlines()) if line.lstrip().startswith("|")
    ]
    return index in table[:2]
