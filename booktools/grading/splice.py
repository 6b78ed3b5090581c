"""What `make grade` runs: the pristine student version with the student's answers spliced in, never the submitted
notebook itself.

A student's answers are the code that replaces each `raise NotImplementedError("Exercise N ...")` stub (the cell's
text before and after the stub must be unchanged), and the cells tagged `answer` (such as chapter 02's
`PREDICTION`). Every other cell comes from the template, so a cell that patches `json.dumps`, installs an IPython
input transformer or redefines a helper is never run. An edit outside the answers becomes a flag in grades.csv.
A Colab form's title line is not code (Colab may rewrite it), and a cell that an earlier student version held
(`known`, fingerprints from published.py) is not an edit.
"""

import hashlib
import re

import nbformat

STUB = re.compile(
    r"^[ \t]*raise NotImplementedError\((?P<q>['\"])Exercise (?P<number>\d+)\b.*\n?",
    re.M,
)


ANSWER_TAG = "answer"
# A Colab form's title line: `# @title` (booktools/build/colab.py, Colab, ruff) or `#@title` (older Colab).
FORM_TITLE = re.compile(r"^[ \t]*#[ \t]*@title\b.*$")


def fingerprint(source: str) -> str:
    """A cell's text as rebuild compares it, hashed: what published.py records of every student version."""
    return hashlib.sha256(lines(source).encode()).hexdigest()[:16]


def lines(text: str) -> str:
    """Text compared line by line without trailing spaces (editors and Colab differ there) and without a form's
    title line."""
    kept = (line.rstrip() for line in text.strip("\n").splitlines())
    return "\n".join(line for line in kept if not FORM_TITLE.match(line)).strip("\n")


def stub_cells(template) -> list:
    """[(cell index, exercise number, text before the stub, text after it)] for every stub cell of the template."""
    found = []
    for i, cell in enumerate(template.cells):
        if cell.cell_type == "code":
            for m in STUB.finditer(cell.source):
                found.append(
                    (
                        i,
                        int(m["number"]),
                        cell.source[: m.start()],
                        cell.source[m.end() :],
                    )
                )
    return found


def answer_name(source: str) -> str | None:
    """The name an answer cell assigns first (`PREDICTION = ...` gives PREDICTION)."""
    m = re.search(r"^([A-Za-z_]\w*)\s*=", source, re.M)
    return m[1] if m else None


def rebuild(
    template, submission, held: frozenset = frozenset(), known: frozenset = frozenset()
) -> tuple:
    """(notebook to run, {exercise number: the student's code}, flags): the template with the answers spliced in,
    except those of the exercises (and `answer NAME` cells) in `held`, whose template cells stay: a held answer
    never runs. `known`: the fingerprints (published.fingerprint) of other cells that are not edits: those of
    earlier student versions."""
    nb = nbformat.from_dict(template)  # a copy
    submitted = [c.source for c in submission.cells if c.cell_type == "code"]
    normalised = [lines(s) for s in submitted]
    used, regions, flags = set(), {}, []
    for i, number, before, after in stub_cells(template):
        head, tail = lines(before), lines(after)
        match = None
        for j in reversed(
            range(len(submitted))
        ):  # the last matching cell: students re-run variants
            text = normalised[j]
            if (
                text.startswith(head)
                and text.endswith(tail)
                and len(text) >= len(head) + len(tail)
            ):
                match = j
                break
        if match is None:
            flags.append(
                f"exercise {number}: its cell was changed outside the part to complete (or deleted), so it was "
                "graded as not done"
            )
            continue
        used.add(match)
        text = normalised[match]
        region = text[len(head) : len(text) - len(tail)] if tail else text[len(head) :]
        regions[number] = region.strip("\n")
        if number not in held:
            nb.cells[i].source = before + region.strip("\n") + "\n" + after
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and ANSWER_TAG in cell.metadata.get("tags", []):
            name = answer_name(cell.source)
            candidates = [
                j
                for j, s in enumerate(submitted)
                if answer_name(s) == name and j not in used
            ]
            if candidates:
                used.add(candidates[-1])
                regions.setdefault(f"answer {name}", submitted[candidates[-1]])
                if f"answer {name}" not in held:
                    cell.source = submitted[candidates[-1]]
    template_code = {lines(c.source) for c in template.cells if c.cell_type == "code"}
    edited = [
        j
        for j, s in enumerate(normalised)
        if j not in used
        and s
        and s not in template_code
        and fingerprint(submitted[j]) not in known
    ]
    if edited:
        flags.append(
            f"{len(edited)} code cell(s) edited or added outside the exercises; the template's were run instead"
        )
    return nb, regions, flags
