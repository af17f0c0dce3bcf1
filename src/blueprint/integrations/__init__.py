"""Scorers that make each runner grade a set's rows as their oracle types say.

One module a runner (``deepeval``, ``langsmith``, ``braintrust``, ...), each a thin adapter:
it reads the row back from the record the runner hands it (the metadata Blueprint's export
wrote), turns the runner's output into a recorded result, and asks
:func:`blueprint.grading.grade_row` for the verdict. The runner's package is imported only
by its own module, and only when that module is: install it as an extra.
"""
