"""Judging (booktools/grading/judge.py): how an answer is judged against the reference's record, and what the
self-checks said."""

import nbformat
import pytest

from conftest import (
    toy_notebook,
)


def observed(*pairs, error=None) -> list:
    """The records a kernel printed for one exercise: (key, value) pairs, or (key, value, rule) for a reference."""
    return [
        {
            "exercise": 1,
            "observed": [
                {
                    "key": p[0],
                    "value": p[1],
                    "why": f"wrong {p[0]}",
                    **(p[2] if len(p) > 2 else {}),
                }
                for p in pairs
            ],
            "error": error,
        }
    ]


@pytest.mark.parametrize(
    "rule, reference, answer, passes",
    [
        ({}, 6, 6, True),
        ({}, 6, 6.0, True),
        ({}, 6, 7, False),
        ({}, True, 1, False),  # a bool agrees only with a bool
        ({}, [1.0, [2.0]], [1.0, [2.0]], True),
        ({}, [1.0, 2.0], [1.0, 2.0, 3.0], False),
        ({}, "Tensor", "<Six>", False),
        ({}, float("nan"), float("nan"), True),
        ({}, 1.0, float("nan"), False),
        ({"close": [1e-6, 0]}, 2.0, 2.000001, True),
        ({"close": [1e-6, 0]}, 2.0, 2.00001, False),
        ({"close": [0, 1e-3]}, [0.0, 1.0], [0.0005, 1.0], True),
        ({"within": [1.0, 2.0]}, 1.5, 1.99, True),
        ({"within": [1.0, 2.0]}, 1.5, 2.0, False),
        ({"within": [1.0, 2.0]}, 1.5, "1.5", False),
        ({"one_of": [1.7, 1.8]}, 1.7, 1.8000000004, True),
        ({"one_of": [1.7, 1.8]}, 1.7, 1.9, False),
    ],
)
def test_an_answer_is_judged_by_the_reference_rule(rule, reference, answer, passes):
    from booktools.grading.judge import verdict

    passed, why = verdict(observed(("x", reference, rule)), observed(("x", answer)))
    assert passed is passes and why == ("passed" if passes else "wrong x")


def test_only_the_reference_says_how_an_answer_is_judged():
    """An answer's kernel cannot loosen the rule (its own `close`/`within` are ignored), skip an observation, report
    twice, hide an error, or send something that is not a record."""
    from booktools.grading.judge import verdict

    reference = observed(("a", 1.0), ("b", 2.0))
    assert verdict(reference, observed(("a", 1.0), ("b", 2.0))) == (True, "passed")
    assert (
        verdict(reference, observed(("a", 1.0), ("b", 3.0, {"close": [1, 1]})))[0]
        is False
    )
    assert verdict(reference, observed(("a", 1.0))) == (False, "wrong b")
    assert verdict(
        reference, observed(("a", 1.0), error="NotImplementedError: Exercise 1")
    ) == (
        False,
        "NotImplementedError: Exercise 1",
    )
    assert (
        verdict(reference, observed(("a", 1.0), ("b", 2.0), error="ValueError: late"))[
            0
        ]
        is False
    )
    assert verdict(reference, observed(("a", 1.0), ("a", 1.0), ("b", 2.0)))[0] is False
    assert verdict(reference, observed(("a", 1.0), ("b", 2.0)) * 2)[0] is False
    assert verdict(reference, None) == (False, "the hidden test reported nothing")
    assert verdict(reference, [{"observed": "everything passed"}])[0] is False
    assert verdict(reference, [["not", "a", "record"]])[0] is False


def test_the_judge_measures_what_is_measured_from_raw_values():
    """A property measured from values (issue #41, item 2): the answer's run records raw values (`_raw`), and the
    judge computes the measure the reference's record names from them, with the reference's raw values beside them
    (booktools/grading/measures.py). What the answer's record says about the property itself is not read, so a
    wrong sampler whose run writes the passing statistic under the property's key still fails; a record that names
    another measure, another source or a looser band changes nothing."""
    import random

    from booktools.grading.judge import verdict

    def calls(
        keep_exactly=None,
    ):  # 200 calls of drop-path on a column of 40 ones, rate 0.25
        draws = []
        for _ in range(200):
            kept = (
                random.sample(range(40), keep_exactly)
                if keep_exactly
                else [i for i in range(40) if random.random() < 0.75]
            )
            draws.append([[4 / 3] if i in kept else [0.0] for i in range(40)])
        return draws

    variance = 40 * 0.25 * 0.75
    rule = {"measure": "kept_count_variance", "of": "calls", "within": [3.0, 12.0]}
    reference = observed(("calls", calls(), {"raw": True}), ("spread", None, rule))
    assert verdict(reference, reference) == (True, "passed")
    assert verdict(reference, observed(("calls", calls()), ("spread", None)))[0]
    exact = calls(
        keep_exactly=30
    )  # the share is right in every call; the count never varies
    assert verdict(reference, observed(("calls", exact), ("spread", None))) == (
        False,
        "wrong spread",
    )
    forged = [
        ("calls", exact, {"raw": False}),
        (
            "spread",
            variance,
            {"measure": "share_kept", "of": "other", "within": [-1, 99]},
        ),
        ("other", calls()),
    ]
    assert verdict(reference, observed(*forged)) == (False, "wrong spread")
    assert (
        verdict(reference, observed(("calls", "<Tensor>"), ("spread", None)))[0]
        is False
    )
    assert (
        verdict(reference, observed(("spread", variance)))[0] is False
    )  # no raw values


def _self_check_cell(number, *outputs):
    cell = nbformat.v4.new_code_cell(f"self_check({number}, check_exercise_{number})")
    cell.metadata["tags"] = ["self-check"]
    cell.outputs = [nbformat.from_dict(o) for o in outputs]
    return cell


def _printed(text):
    return {"output_type": "stream", "name": "stdout", "text": text}


def _raised(ename, evalue):
    return {"output_type": "error", "ename": ename, "evalue": evalue, "traceback": []}


def test_an_error_met_observing_apart_is_not_called_the_answers():
    """A hidden test's observe_N that cannot read what the answer kept (an array of the wrong kind) fails the
    exercise; the student reads that the test could not read what the code returned, not that the code raised."""
    from booktools.grading.judge import OBSERVING, judgement

    reference = observed(("out", 1.0))
    answer = observed(error=f"{OBSERVING}RuntimeError: Error(s) in loading state_dict")
    passed, why, told = judgement(reference, answer)
    assert not passed and why.startswith(OBSERVING)
    assert told == "the hidden test could not read what your code returned"


def test_grades_record_what_each_self_check_said():
    """The self-checks never change a score, but grades.csv shows what each one told the student: every line, and
    any error."""
    from booktools.grading.cells import self_check_outcomes, self_checks

    nb = toy_notebook("x = 1")
    nb.cells += [
        _self_check_cell(
            1, _printed("Plain-33 has a gap of 3 pp.\nExercise 1: correct.\n")
        ),
        _self_check_cell(
            2,
            _raised(
                "AssertionError", "Exercise 2: not yet right: alpha must start at 0"
            ),
        ),
        _self_check_cell(3),
        _self_check_cell(
            4, _printed("Exercise 4: correct.\n"), _raised("GeneratorExit", "")
        ),
        _self_check_cell(
            5,
            _printed(
                "Exercise 5: correct.\nExercise 5: not yet right: a second check\n"
            ),
        ),
    ]
    assert self_checks(nb, len(nb.cells)) == (
        "Plain-33 has a gap of 3 pp. / Exercise 1: correct.; Exercise 2: not yet right: alpha must start at 0; "
        "no output; Exercise 4: correct. / GeneratorExit: ; "
        "Exercise 5: correct. / Exercise 5: not yet right: a second check"
    )
    assert self_check_outcomes(nb, len(nb.cells)) == {
        1: {"correct": True, "said": "correct"},
        2: {
            "correct": False,
            "said": "Exercise 2: not yet right: alpha must start at 0",
        },
        3: {"correct": False, "said": "no verdict"},
        4: {"correct": False, "said": "GeneratorExit: "},
        5: {"correct": False, "said": "Exercise 5: not yet right: a second check"},
    }
    assert self_checks(nb, 1) == "", "only the submitted cells count, not the grader's"


@pytest.mark.parametrize(
    "said, flag",
    [
        (  # an answer that may have talked its way past the hidden test, or a self-check too strict
            {1: {"correct": False, "said": "Exercise 1: not yet right: wrong shape"}},
            "exercise 1: passed, but its self-check said: Exercise 1: not yet right: wrong shape",
        ),
        (  # a self-check that printed before its verdict, then died of something that is not an AssertionError
            {1: {"correct": False, "said": "GeneratorExit: "}},
            "exercise 1: passed, but its self-check said: GeneratorExit: ",
        ),
        (  # a right answer the hidden test is too strict for (a list for a tuple), or one right only on the
            # notebook's own inputs
            {
                1: {"correct": True, "said": "correct"},
                2: {"correct": True, "said": "correct"},
            },
            "exercise 2: its self-check said it is correct, but the hidden test did not pass it",
        ),
    ],
)
def test_a_grade_that_its_own_self_check_contradicts_is_flagged(said, flag):
    from booktools.grading.judge import score

    reference = {1: observed(("x", 1.0)), 2: observed(("y", 2.0))}
    run = {
        "student": "ada",
        "records": {1: observed(("x", 1.0)), 2: observed(("y", 3.0))},
        "held": {},
        "notes": "",
        "flags": "",
        "self_checks": "",
        "self_check_outcomes": said,
    }
    row = score(run, reference)
    assert (row["exercise_1"], row["exercise_2"]) == (1, 0)
    assert row["flags"] == flag
    run["held"] = {2: ["uses gains"]}
    assert "exercise 2" not in score(run, reference)["flags"], (
        "a held answer is flagged as held, not as a disagreement"
    )


def test_a_student_reads_which_property_failed_and_the_instructor_reads_everything(
    tmp_path,
):
    """grades.csv keeps the instructor's reasons (with the drawn inputs) and what the scan held; the LMS files carry
    only the feedback written for students, and a held answer is a blank score that needs review, never a 0."""
    import csv

    from booktools.grading.judge import score
    from booktools.grading.lms import write_lms_csv

    reference = {
        1: [
            {
                "exercise": 1,
                "observed": [
                    {
                        "key": "lr at step 7 of 40 to 0.000337",
                        "value": 1.0,
                        "why": "wrong at step 7 of a 40-step warm-up to peak_lr = 0.000337",
                        "student": "the rate rises linearly during warm-up",
                    }
                ],
                "error": None,
            }
        ],
        2: observed(("y", 2.0)),
        3: observed(("z", 3.0)),
    }
    runs = [
        {
            "student": "ada",
            "records": {
                1: observed(("lr at step 7 of 40 to 0.000337", 2.0)),
                2: observed(("y", 2.0)),
            },
            "held": {3: ["imports shutil"]},
            "notes": "",
            "flags": "exercise 3: imports shutil",
            "self_checks": "",
        },
        {
            "student": "ben",
            "records": {
                1: observed(("lr at step 7 of 40 to 0.000337", 1.0)),
                2: observed(error="ValueError: shape (37, 5) does not match (37, 6)"),
                3: observed(("z", 3.0)),
            },
            "held": {},
            "notes": "",
            "flags": "",
            "self_checks": "",
        },
    ]
    rows = [score(run, reference) for run in runs]
    ada, ben = rows
    assert (ada["exercise_1"], ada["exercise_2"], ada["exercise_3"], ada["score"]) == (
        0,
        1,
        "",
        "",
    )
    assert ada["needs_review"] == "exercise 3"
    assert "0.000337" in ada["reasons"] and "RUN_FLAGGED=1" in ada["reasons"], (
        "the instructor's CSV keeps all"
    )
    assert ada["feedback"] == (
        "exercise 1: the rate rises linearly during warm-up; exercise 3: needs review: a person reads this answer "
        "before it is marked"
    )
    assert (
        ben["score"] == 2
        and ben["feedback"] == "exercise 2: your code raised ValueError"
    )
    for lms in ("canvas", "moodle"):
        write_lms_csv(rows, tmp_path / f"{lms}.csv", lms, "Chapter 5")
        text = (tmp_path / f"{lms}.csv").read_text()
        for secret in ("0.000337", "37", "RUN_FLAGGED", "imports shutil", "flagged"):
            assert secret not in text, f"{lms}: a student would read {secret!r}: {text}"
        with open(tmp_path / f"{lms}.csv", newline="") as f:
            scores = {
                r.get("Username") or r["SIS Login ID"]: r["Chapter 5"]
                for r in csv.DictReader(f)
            }
        assert scores == {"ada": "", "ben": "2"}, scores
    with open(tmp_path / "moodle.csv", newline="") as f:
        moodle = {r["Username"]: r for r in csv.DictReader(f)}
    assert "needs review" in moodle["ada"]["Feedback"]
