"""Judging, in the grader's process: what a hidden test observed of an answer against what it observed of the
reference solution (`verdict`), and a submission's row of marks (`score`). Nothing the answer's kernel says decides
a mark: the kernel says what it saw, never how it is judged."""

import math


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
    """Whether the answer's value `got` passes the reference's `observation`, by the rule written there."""
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
    it too (something else printed one)."""
    if not answer:
        return False, "the hidden test reported nothing"
    if len(answer) > 1:
        return (
            False,
            "the hidden test's result was printed more than once (something in the kernel printed one)",
        )
    record = answer[0]
    observed = record.get("observed") if isinstance(record, dict) else None
    if not isinstance(observed, list) or not all(
        isinstance(o, dict) and isinstance(o.get("key"), str) for o in observed
    ):
        return False, "the hidden test's result is malformed"
    values = {}
    for o in observed:
        if o["key"] in values:
            return False, f"the hidden test's result is malformed ({o['key']} twice)"
        values[o["key"]] = o.get("value")
    error = record.get("error")
    # the watch first: an answer that changed the notebook's code is told so before anything it got wrong
    for expected in sorted(
        reference[0]["observed"], key=lambda e: e["key"] != "unchanged"
    ):
        if expected["key"] not in values:
            return False, str(error)[:300] if error else expected["why"]
        if not judged(expected, values[expected["key"]]):
            return False, expected["why"]
    if error:
        return False, str(error)[:300]
    return True, "passed"


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
    return problems


def score(run: dict, reference: dict) -> dict:
    """A submission's row of grades.csv: {'student', 'exercise_N': 0/1, 'score', 'out_of', 'reasons', 'notes',
    'flags', 'self_checks'}, each exercise judged against the reference's records (`verdict`), in this process."""
    numbers = sorted(reference)
    row = {
        "student": run["student"],
        **{f"exercise_{n}": 0 for n in numbers},
        "score": 0,
        "out_of": len(numbers),
    }
    reasons = {}
    for n in numbers:
        if run.get("invalid"):
            reasons[n] = "not graded"
        elif n in run["held"]:
            reasons[n] = (
                f"held for review, not run: the answer {', '.join(run['held'][n])} (read it; if it is harmless, "
                "grade again with RUN_FLAGGED=1)"
            )
        else:
            passed, reasons[n] = verdict(reference[n], run["records"].get(n))
            row[f"exercise_{n}"] = int(passed)
    row["score"] = sum(row[f"exercise_{n}"] for n in numbers)
    row["reasons"] = "; ".join(
        f"exercise {n}: {r}" for n, r in reasons.items() if r != "passed"
    )
    # a passed exercise whose own self-check said it is wrong: an answer that may have talked its way past the
    # hidden test, or a self-check that is too strict; either way a person should read it
    # (or not done: an answer that behaves one way while the notebook runs and another in the hidden test)
    disagreements = [
        f"exercise {n}: passed, but its self-check said it is {said}"
        for n in numbers
        for said in ("not yet right", "not done yet")
        if row[f"exercise_{n}"] and f"Exercise {n}: {said}" in run["self_checks"]
    ]
    # and the other way round: a right answer the hidden test is too strict for (a list where the reference returns
    # a tuple, a float32 tensor where it stores a float), or an answer right only on the notebook's own inputs
    disagreements += [
        f"exercise {n}: its self-check said it is correct, but the hidden test did not pass it"
        for n in numbers
        if not row[f"exercise_{n}"]
        and n not in run["held"]
        and not run.get("invalid")
        and f"Exercise {n}: correct" in run["self_checks"]
    ]
    flags = "; ".join(part for part in [run["flags"], *disagreements] if part)
    row.update(notes=run["notes"], flags=flags, self_checks=run["self_checks"])
    return row
