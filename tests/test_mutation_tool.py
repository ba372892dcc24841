"""benchmarks/mutation.py's choice of lines for a run on named functions (the cosmic-ray run itself is a benchmark)."""

import importlib.util

import pytest
from conftest import REPO

SPEC = importlib.util.spec_from_file_location("mutation", REPO / "benchmarks" / "mutation.py")
mutation = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(mutation)

SOURCE = '''import functools


@functools.cache
def first(x):
    return x + 1


class Box:
    def first(self):
        return 2

    def other(self):
        def inner():
            return 3
        return inner()
'''


def test_named_functions_span_their_decorators_and_methods_by_hand():
    """Lines counted by hand in SOURCE: first's decorator on 4, its body ends on 6; a bare name takes every function
    of that name (the method too, 10–11); Class.method names one; a nested function lies inside its parent's span."""
    assert mutation.function_lines(SOURCE, ["first"], "demo") == {"first": (4, 6), "Box.first": (10, 11)}
    assert mutation.function_lines(SOURCE, ["Box.other"], "demo") == {"Box.other": (13, 16)}
    with pytest.raises(ValueError, match="--functions: second, Box.nothing not defined in iclab.demo"):
        mutation.function_lines(SOURCE, ["second", "first", "Box.nothing"], "demo")
