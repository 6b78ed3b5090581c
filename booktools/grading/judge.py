"""Judging, in the grader's process: what a hidden test observed of an answer against what it observed of the
reference solution (`verdict`), and a submission's row of marks (`score`). Nothing the answer's kernel says decides
a mark: the kernel says what it saw, never how it is judged."""

import math

from booktools.grading.measures import MEASURES

# how an error of a hidden test's observe_N starts (isolated.OBSERVER): no error of the answer's
OBSERVING = "observing what the answer kept: "


def _same(got, expected, rtol: float = 0.0, atol: float = 0.0) -> bool:
    """Whether two JSON values agree: numbers to within atol + rtol |expected| (NaN agrees with NaN; a bool only with
    a bool), lists element by element, anything else exactly."""
    if isinstance(expected, bool) or isinstance(got, bool):
        return type(got) is type(expected) and got == expected
    if isinstance(expected, (int, float)) and isinstance(got, (int, float)):
        if math.isnan(expected) or math.isnan(got):
            return math.isnan(expected) and math.isnan(got)
        if math.isinf(expected) or math.isinf(got):
            return got == expected
        return abs(got - expected) <= atol + rtol * abs(expected)
    if isinstance(expected, list) and isinstance(got, list):
        return len(got) == len(expected) and all(
            _same(g, e, rtol, atol) for g, e in zip(got, expected)
        )
    if isinstance(expected, dict) and isinstance(got, dict):
        return got.keys() == expected.keys() and all(
            _same(got[k], expected[k], rtol, atol) for k in expected
        )
    return type(got) is type(expected) and got == expected


def judged(observation: dict, got) -> bool:
    """Whether the answer's value `got` passes the reference's `observation`, by the rule written there. Where the
    observation names a measure (measures.py), the judge computes it here from both raw values and judges that."""
    if "measure" in observation:
        measure = MEASURES.get(observation["measure"])
        if measure is None:
            return False
        try:
            got = measure(got, observation["value"])
            expected = measure(observation["value"], observation["value"])
        # raw values of the wrong kind or shape: the property does not hold
        except Exception:
            return False
        observation = {k: v for k, v in observation.items() if k != "measure"} | {
            "value": expected
        }
    if "close" in observation:
        rtol, atol = observation["close"]
        return _same(got, observation["value"], rtol, atol)
    if "within" in observation:
        low, high = observation["within"]
        return (
            isinstance(got, (int, float))
            and not isinstance(got, bool)
            and low < got < high
        )
    if "one_of" in observation:
        return any(_same(got, v, 0, 1e-6) for v in observation["one_of"])
    return _same(got, observation["value"])


def verdict(reference: list, answer: list | None) -> tuple:
    """(passed, reason) for one exercise: what the hidden test observed of the answer (`answer`, the records its
    kernel printed) against what it observed of the reference solution (`reference`), in the grader's process.
    Each of the reference's observations in turn, by the reference's own rule: a kernel can say what it saw, never
    how it is judged. An error in the answer's run fails it; a kernel that prints two results for an exercise fails
    it too (something else printed one). The reason is the instructor's: it may quote the drawn inputs."""
    return judgement(reference, answer)[:2]


def judgement(reference: list, answer: list | None) -> tuple:
    """(passed, reason, feedback): `verdict`'s two, and what a student may read of the same failure (the property's
    `student` text, the name of an error, never the drawn inputs nor the instructor's words)."""
    if not answer:
        return (
            False,
            "the hidden test reported nothing",
            "the hidden test reported nothing",
        )
    if len(answer) > 1:
        why = "the hidden test's result was printed more than once (something in the kernel printed one)"
        return False, why, why
    record = answer[0]
    observed = record.get("observed") if isinstance(record, dict) else None
    if not isinstance(observed, list) or not all(
        isinstance(o, dict) and isinstance(o.get("key"), str) for o in observed
    ):
        return (
            False,
            "the hidden test's result is malformed",
            "the hidden test's result is malformed",
        )
    values = {}
    for o in observed:
        if o["key"] in values:
            why = f"the hidden test's result is malformed ({o['key']} twice)"
            return False, why, "the hidden test's result is malformed"
        values[o["key"]] = o.get("value")
    error = record.get("error")
    raised = error and _raised(str(error))
    # raw values (`_raw`) are judged by none of their own: a measure reads them (`of`)
    raw = {o["key"]: o["value"] for o in reference[0]["observed"] if o.get("raw")}
    # the watch first: an answer that changed the notebook's code is told so before anything it got wrong
    for expected in sorted(
        reference[0]["observed"], key=lambda e: e["key"] != "unchanged"
    ):
        if expected.get("raw"):
            continue
        told = expected.get("student") or expected["why"]
        source = expected.get("of", expected["key"])
        if source not in values:
            return (
                (False, str(error)[:300], raised)
                if error
                else (False, expected["why"], told)
            )
        if source in raw:
            expected = expected | {"value": raw[source]}
        if not judged(expected, values[source]):
            return False, expected["why"], told
    if error:
        return False, str(error)[:300], raised
    return True, "passed", "passed"


def _raised(error: str) -> str:
    """An error a hidden test met, as a student reads it: its kind, not its message (which can quote the inputs)."""
    if error == "timed out":
        return "the hidden test timed out"
    if error.startswith(OBSERVING):
        return "the hidden test could not read what your code returned"
    kind = error.split(":", 1)[0].strip()
    return (
        f"your code raised {kind}"
        if kind.isidentifier()
        else "your code raised an error"
    )


def reference_problems(reference: dict, numbers: list) -> list:
    """A sentence for each exercise whose hidden test does not pass the reference solution by its own rules."""
    problems = []
    for n in numbers:
        found = reference.get(n)
        if not found or len(found) > 1 or found[0].get("error"):
            problems.append(
                f"exercise {n}: {found[0].get('error') if found else 'no result'}"
            )
            continue
        passed, why = verdict(found, found)
        if not passed:
            problems.append(f"exercise {n}: the reference fails its own test ({why})")
            continue
        changed = [
            o["value"]
            for o in found[0].get("observed", [])
            if o.get("key") == "unchanged" and o.get("value")
        ]
        if changed:  # what the reference changed, every answer must change too: a watch that sees a warm-up
            problems.append(
                f"exercise {n}: the reference solution's run changed {changed[0]}: warm it up before the watch"
            )
    return problems


NEEDS_REVIEW = "needs review"
HELD_FEEDBACK = "needs review: a person reads this answer before it is marked"


def score(run: dict, reference: dict) -> dict:
    """A submission's row of grades.csv: {'student', 'exercise_N': 1, 0 or '' (held: needs review), 'score' ('' while
    an exercise needs review), 'out_of', 'needs_review', 'reasons' (the instructor's, with the drawn inputs),
    'feedback' (what a student may read: which property failed), 'notes', 'flags', 'self_checks'}, each exercise
    judged against the reference's records (`judgement`), in this process."""
    numbers = sorted(reference)
    row = {
        "student": run["student"],
        **{f"exercise_{n}": 0 for n in numbers},
        "score": 0,
        "out_of": len(numbers),
        "needs_review": "",
    }
    reasons, feedback = {}, {}
    for n in numbers:
        if run.get("invalid"):
            reasons[n] = feedback[n] = "not graded: the file is not a valid notebook"
        elif n in run["held"]:
            # never a 0 that a gradebook imports: a blank mark, for a person to decide
            row[f"exercise_{n}"] = ""
            reasons[n] = (
                f"held for review, not run: the answer {', '.join(run['held'][n])} (read it; if it is harmless, "
                "grade again with RUN_FLAGGED=1)"
            )
            feedback[n] = HELD_FEEDBACK
        else:
            passed, reasons[n], feedback[n] = judgement(
                reference[n], run["records"].get(n)
            )
            row[f"exercise_{n}"] = int(passed)
    held = [n for n in numbers if row[f"exercise_{n}"] == ""]
    row["needs_review"] = "; ".join(f"exercise {n}" for n in held)
    row["score"] = "" if held else sum(row[f"exercise_{n}"] for n in numbers)
    row["reasons"] = "; ".join(
        f"exercise {n}: {r}" for n, r in reasons.items() if r != "passed"
    )
    row["feedback"] = "; ".join(
        f"exercise {n}: {r}" for n, r in feedback.items() if r != "passed"
    )
    said = run.get("self_check_outcomes", {})
    # a passed exercise whose own self-check said anything but "correct" (a line saying it is wrong or not done,
    # an error of any kind, no verdict at all): an answer that may have talked its way past the hidden test, or
    # behaves one way while the notebook runs and another in the hidden test, or a self-check too strict
    disagreements = [
        f"exercise {n}: passed, but its self-check said: {said[n]['said']}"
        for n in numbers
        if row[f"exercise_{n}"] == 1 and n in said and not said[n]["correct"]
    ]
    # and the other way round: a right answer the hidden test is too strict for (a list where the reference returns
    # a tuple, a float32 tensor where it stores a float), or an answer right only on the notebook's own inputs
    disagreements += [
        f"exercise {n}: its self-check said it is correct, but the hidden test did not pass it"
        for n in numbers
        if row[f"exercise_{n}"] == 0
        and not run.get("invalid")
        and n in said
        and said[n]["correct"]
    ]
    flags = "; ".join(part for part in [run["flags"], *disagreements] if part)
    row.update(notes=run["notes"], flags=flags, self_checks=run["self_checks"])
    return row
