def self_check(number: int, check) -> None:
    """Run an exercise's checks; say in one sentence what is missing or wrong."""
    try:
        check()
    except NotImplementedError:
        print(
            f"Exercise {number}: not done yet. In the cell above, replace the line "
            "that raises NotImplementedError with your code, run that cell, then "
            "this one."
        )
        return
    except AssertionError as err:
        raise AssertionError(f"Exercise {number}: not yet right: {err}") from None
    except Exception as err:
        raise AssertionError(
            f"Exercise {number}: your code raised {type(err).__name__}: {err}"
        ) from None
    print(f"Exercise {number}: correct.")
