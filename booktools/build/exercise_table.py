"""The exercise table of the instructors' page (book/instructors.md, between `<!-- exercises:start -->` and
`<!-- exercises:end -->`), made from what grades the exercises, so that it cannot drift from them:

- the exercises and their titles: each chapter's `### Exercise N: title` headings;
- the points: what `make grade` gives each one, asked of the grader itself (booktools/grading/judge.py's `score`
  on a submission that passes every hidden test of booktools/grading/hidden/NN_topic.py);
- the written part: whether the exercise's text asks the student to predict or explain (`WRITTEN`), which the
  grader does not mark; the instructors' page has a model answer for each;
- what the hidden test checks and the minutes a student needs: `ABOUT` below, written by hand, one entry per
  exercise; an exercise without one, or one without an exercise, stops the table with a message.

tests/test_copies.py fails when the committed table differs from the one this makes.
Usage: python -m booktools.build.exercise_table   (rewrites the table in book/instructors.md)
"""

import re
import sys
from pathlib import Path

import nbformat

from booktools.build.student import EXERCISE
from booktools.grading.cells import exercises
from booktools.grading.judge import score
from booktools.settings import HIDDEN, NOTEBOOKS, ROOT

PAGE = ROOT / "book" / "instructors.md"
START, END = "<!-- exercises:start -->", "<!-- exercises:end -->"
# what makes an exercise's text a written part: a prediction or an explanation that no hidden test marks
WRITTEN = re.compile(
    r"\*\*Predict first:?\*\*|\bpredict whether\b|\bWhy would they\b|\bthink about\b",
    re.I,
)

# (what the hidden test checks, on inputs the notebook never shows; minutes a student needs, an estimate)
ABOUT = {
    "01_degradation": {
        1: (
            "the final test minus training error of a run, in percentage points, on runs of other shapes",
            10,
        ),
        2: (
            "a `BNPlainBlock` made the identity on non-negative inputs by its weights and BatchNorm statistics, "
            "changed in place, layers kept",
            25,
        ),
        3: (
            "the option-A shortcut by hand (subsample, zero channels half before and half after): shapes and "
            "values; `ShortcutA` not used",
            15,
        ),
    },
    "02_identity_and_zero_init": {
        1: (
            "ReZero's `forward`, x + αF(x): the identity at α = 0, outputs and gradients of α, branch and input",
            10,
        ),
        2: (
            "the option-A shortcut as a function of stride and width: values, shapes, gradient; `PadShortcut` not "
            "used",
            15,
        ),
        3: (
            "zero γ of the last BatchNorm of every residual block, nested ones too, nothing else changed, "
            "γ still trainable",
            15,
        ),
        4: (
            "which runs count as trained (not diverged, ≥ 90 % accuracy), on made-up runs",
            10,
        ),
        5: (
            "LayerScale's per-channel scale: a trainable `nn.Parameter` of shape (width,), starting at ε; "
            "outputs and gradients",
            10,
        ),
    },
    "03_gradient_flow": {
        1: (
            "the normalised autocorrelation at any lag, as a float, input left alone; "
            "`lag1_autocorrelation` not used",
            15,
        ),
        2: (
            "the input-to-output gradient ratio of a residual stack with branches scaled by 1/√depth",
            20,
        ),
        3: (
            "the init scale, on a grid from 1 to 3, that keeps a plain stack's gradient size from output to "
            "input",
            25,
        ),
    },
    "04_ensemble_of_paths": {
        1: (
            "the share of the 2ⁿ paths with lengths in a range, from binomial counts; `path_length_share` not "
            "used",
            10,
        ),
        2: ("the Kendall-τ distance of an order; `kendall_tau_distance` not used", 15),
        3: ("the path length k that maximises C(n, k) rᵏ", 15),
        4: (
            "the test error with one block's branch zeroed and its ReLU kept, the network put back as it was",
            20,
        ),
        5: (
            "DropPath per example, inverted scaling: rows kept whole or zeroed, kept rows divided by 1 − r, "
            "fresh draws, gradients, input left alone",
            25,
        ),
    },
    "05_pre_vs_post_norm": {
        1: (
            "the linear warm-up learning rate at every step, with and without warm-up",
            10,
        ),
        2: (
            "a ReZero transformer block: the identity at α = 0, outputs and gradients at other α, "
            "no LayerNorm used, input left alone",
            20,
        ),
        3: (
            "the energy each pre-norm block adds to the residual stream, one value per block",
            20,
        ),
    },
    "06_failure_modes": {
        1: (
            "a matrix's relative distance from rank one; `relative_residual` not used",
            10,
        ),
        2: (
            "x rebuilt from the output of an additive coupling and its two branches, y left alone",
            15,
        ),
        3: (
            "the backward peak of checkpointed segments, measured on blocks of different sizes, "
            "blocks left as they were",
            30,
        ),
    },
    "07_loss_landscape": {
        1: (
            "a direction filter-normalised row by row, zeros for 1-D parameters; "
            "`filter_normalised_direction` not used",
            15,
        ),
        2: (
            "the share of rays along which the loss never falls by more than tol; `monotone_share` not used",
            15,
        ),
        3: (
            "the loss with BatchNorm's running statistics, the net left in training mode and unchanged",
            15,
        ),
    },
    "08_variants": {
        1: (
            "a shortcut-only gate: values, shape and gradients of relu((1 − σ(g)) x + f), inputs left alone",
            15,
        ),
        2: (
            "a DenseNet stack's parameter count by formula, for other widths, growths and depths; "
            "no `DenseStack` built",
            20,
        ),
        3: (
            "Heun's method on the trained ODE net: the final hidden state for several step counts",
            20,
        ),
        4: (
            "a bottleneck block's multiply-adds by formula, for other widths, sides and strides; "
            "no `BottleneckBlock` built",
            25,
        ),
    },
    "09_depth_scaling": {
        1: (
            "the stream's RMS at the input and after every scaled block, with gradients to input and branches",
            15,
        ),
        2: (
            "every `ScaledResidualBlock`'s scale set by the depth rule, nested ones too, nothing else changed",
            15,
        ),
        3: (
            "each row's best finite learning rate index, −1 where none is finite, ties to the first",
            15,
        ),
    },
    "10_hyper_connections": {
        1: (
            "the forward and backward gains of a product of mixing matrices, in the right order; "
            "`composite_maps` and `gains` not used",
            15,
        ),
        2: (
            "Sinkhorn–Knopp in the log domain: the same matrix as `sinkhorn`, finite for large logits; "
            "`sinkhorn` not used",
            20,
        ),
        3: (
            "Sinkhorn–Knopp until the columns are within tol: the matrix and the iteration count",
            20,
        ),
    },
    "11_residual_stream": {
        1: (
            "the residual stream after the first k sublayers, for every k; `stream_writes` and `stream_states` "
            "not used",
            20,
        ),
        2: (
            "each component's part of a LayerNorm frozen at the whole sum's statistics; `frozen_ln_parts` not "
            "used",
            25,
        ),
        3: (
            "the KL divergence from the final logits to a lens's, averaged over positions; `kl_to_final` "
            "not used",
            15,
        ),
    },
    "12_without_the_shortcut": {
        1: (
            "the ReLU C map on cosines of any shape, the endpoints −1 and 1 among them, input left alone; "
            "`leaky_relu_c_map` not used",
            10,
        ),
        2: (
            "TAT's slope to within 1e-6 for deep and shallow nets, `None` where no slope reaches eta, slopes near "
            "1; `compose_c_map`, `leaky_relu_c_map` and `tat_slope` not used",
            20,
        ),
        3: (
            "(αI + βA)V per head for other batches, heads and sizes, β = 0 too; the gradients of all four "
            "inputs; inputs left alone",
            15,
        ),
    },
    "13_beyond_the_transformer": {
        1: (
            "μ, the distance of node features from v₁'s span, for other shapes, scales and dtypes and for "
            "features almost collapsed onto v₁; inputs left alone; `similarity` not used",
            15,
        ),
        2: (
            "EDM2's magnitude-preserving sum for other shapes and weights, t = 0 and t = 1 included; inputs left "
            "alone; `mp_sum` and `lerp` not used",
            10,
        ),
        3: (
            "a residual message-passing layer h + relu(lin(P h)): outputs and gradients for symmetric and "
            "random-walk P, h with and without negative entries, h left alone; `GCNLayer` not used",
            15,
        ),
    },
    "14_connection_designs": {
        1: (
            "Deep Delta Learning's update x + β(s − k·x)k, row by row, for gates from 0 to 2: values, exactly x "
            "where β = 0, gradients to all four inputs, inputs left alone; `delta_operator` and `DeepDelta` "
            "not used",
            15,
        ),
        2: (
            "DenseFormer's Σⱼ αⱼXⱼ for free weights and outputs of any shape: values, exactly the chosen "
            "output for one-hot weights, gradients to α and the outputs; `DenseFormer` not used",
            10,
        ),
        3: (
            "one AttnRes read, a softmax over depth of w·RMSNorm(vⱼ) applied to the raw vⱼ: values, finite "
            "for a source of zeros and a large query, gradients to the query and the sources; `AttnRes` not "
            "used",
            20,
        ),
    },
}


def exercise_texts(path: Path) -> dict:
    """{exercise number: (title, the markdown of its section)} of a chapter, from its `### Exercise N: title`
    headings."""
    nb = nbformat.read(path, as_version=4)
    found, current = {}, None
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        heading = EXERCISE.search(cell.source)
        if heading:
            current = int(heading["number"])
            found[current] = [heading["title"].strip(), cell.source]
        elif re.match(r"^#{1,2}\s", cell.source.lstrip()):
            current = None  # a section after the exercises (References)
        elif current is not None:
            found[current][1] += "\n" + cell.source
    return {n: tuple(v) for n, v in found.items()}


def points(chapter: str, hidden: Path = HIDDEN) -> dict:
    """{exercise number: the points `make grade` gives it}, asked of the grader: the row it scores for a
    submission whose every hidden test observed what the reference's did."""
    _, numbers = exercises(chapter, hidden=hidden)
    record = [{"observed": [{"key": "value", "value": 1, "why": ""}], "error": None}]
    reference = {n: record for n in numbers}
    run = {
        "student": "all right",
        "records": reference,
        "held": {},
        "flags": "",
        "notes": "",
        "self_checks": "",
    }
    row = score(run, reference)
    return {n: row[f"exercise_{n}"] for n in numbers}


def rows(chapters: list = NOTEBOOKS, hidden: Path = HIDDEN) -> list:
    """One row per exercise: (chapter, number, title, points, written part, what the hidden test checks,
    minutes). Stops with a message where the notebooks, the hidden tests and ABOUT disagree."""
    out = []
    for path in chapters:
        chapter = path.stem
        texts, marks = exercise_texts(path), points(chapter, hidden)
        about = ABOUT.get(chapter, {})
        if set(texts) != set(marks):
            raise SystemExit(
                f"{chapter}: the notebook has exercises {sorted(texts)}, the hidden tests {sorted(marks)}"
            )
        if set(texts) != set(about):
            raise SystemExit(
                f"{chapter}: the notebook has exercises {sorted(texts)}; booktools/build/exercise_table.py "
                f"describes {sorted(about)}: say what each hidden test checks in ABOUT"
            )
        for n in sorted(texts):
            title, text = texts[n]
            written = "predict or explain" if WRITTEN.search(text) else ""
            out.append((chapter, n, title, marks[n], written, *about[n]))
    return out


def plain(title: str) -> str:
    """A heading as table text: no emphasis marks, no MyST roles."""
    title = re.sub(r"\{[\w:-]+\}`([^`]*)`", r"\1", title)
    return re.sub(r"(?<!\w)[*_]([^*_]+)[*_](?!\w)", r"\1", title).rstrip(".")


def table(chapters: list = NOTEBOOKS, hidden: Path = HIDDEN) -> str:
    """The table, with a line of totals per chapter under it."""
    found = rows(chapters, hidden)
    lines = [
        "| Chapter | Exercise | Points | Written part (not graded) | What the hidden test checks | Minutes |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for chapter, n, title, pts, written, what, minutes in found:
        lines.append(
            f"| `{chapter}` | {n}: {plain(title)} | {pts} | {written} | {what} | {minutes} |"
        )
    totals = {}
    for chapter, _, _, pts, _, _, minutes in found:
        count, total, time = totals.get(chapter, (0, 0, 0))
        totals[chapter] = (count + 1, total + pts, time + minutes)
    summary = "; ".join(
        f"`{chapter}` {count} exercises, {total} points, about {time} min"
        for chapter, (count, total, time) in totals.items()
    )
    return "\n".join(lines) + f"\n\nIn all: {summary}.\n"


def rewrite(page: Path = PAGE) -> bool:
    """Put the table between the markers of `page`; True if that changed it."""
    text = page.read_text()
    if START not in text or END not in text:
        raise SystemExit(
            f"{page} has no {START} ... {END} markers for the exercise table"
        )
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    new = f"{head}{START}\n{table()}{END}{tail}"
    if new != text:
        page.write_text(new)
    return new != text


def committed(page: Path = PAGE) -> str:
    """The table between the markers of `page`, as committed."""
    text = page.read_text()
    return text.split(START, 1)[1].split(END, 1)[0].lstrip("\n")


if __name__ == "__main__":
    changed = rewrite()
    print(
        f"{'rewrote' if changed else 'unchanged:'} the exercise table in {PAGE.relative_to(ROOT)}"
    )
    sys.exit(0)
