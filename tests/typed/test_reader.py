"""A JSON value read against its declared type, on types declared here (results.json's own form is read in
tests/results/test_results.py): what is taken, what is refused, and the first wrong field named in one line."""

# No ``from __future__ import annotations``: the TypedDicts' annotations are read at run time.

import math
from dataclasses import dataclass, field
from typing import Annotated, Literal, NotRequired, TypedDict

import pytest

from loadtest.typed.column_checkers import Wrong
from loadtest.typed.reader import Check, _checker, read

Even = Annotated[int, Check(lambda n: n % 2 == 0, "an even number")]


class Row(TypedDict):
    t: int
    share: float
    kind: Literal["GET", "PUT"]
    pair: tuple[str, int]
    later: NotRequired[dict[str, Even]]  # came later than its section: rows written before lack it


@dataclass
class Whole:
    name: str
    rows: list[Row]
    extra: dict[str, int] = field(default_factory=dict)  # left empty: the section's absence


def row(**changed) -> dict:
    return {"t": 1, "share": 0.5, "kind": "GET", "pair": ["a", 1], **changed}


def test_a_conforming_value_is_read_made_where_declared_and_undeclared_keys_read_past():
    rows = [row(), row(t=2, later={"x": 4}, unknown=[1, "past"])]
    whole = read(Whole, {"name": "w", "rows": rows, "new_field": True}, "w")
    assert isinstance(whole, Whole) and whole.rows == rows and whole.extra == {}


@pytest.mark.parametrize(
    "rows, said",
    [
        ([row(), {"share": 0.5, "kind": "GET", "pair": ["a", 1]}], "w.rows[1].t: missing"),
        ([row(t=True)], "w.rows[0].t: a whole number, not true"),
        ([row(t=1.5)], "w.rows[0].t: a whole number, not 1.5"),
        ([row(share=math.inf)], "w.rows[0].share: a number, not inf"),
        ([row(kind="POST")], 'w.rows[0].kind: one of GET, PUT, not "POST"'),
        ([row(pair=["a", "b"])], 'w.rows[0].pair[1]: a whole number, not "b"'),
        ([row(later={"odd key": 3})], 'w.rows[0].later["odd key"]: an even number, not 3'),
        ({"t": 1}, 'w.rows: a list, not {"t": 1}'),
    ],
)
def test_the_first_wrong_field_is_named_from_where_on_in_one_line(rows, said):
    with pytest.raises(ValueError) as wrong:
        read(Whole, {"name": "w", "rows": rows}, "w")
    assert str(wrong.value) == said


@pytest.mark.parametrize(
    "column",
    [[row(), row(later={"x": 2})], [row(), row(later={"x": 3})], [row(), row(t="1")], [row(), {"t": 1}], [row(), []]],
)
def test_the_fast_test_of_a_whole_column_agrees_with_checking_each_value(column):
    checker = _checker(Row)
    try:
        for value in column:
            checker.check(value)
        walked = True
    except Wrong:
        walked = False
    assert checker.test(column) == walked


def test_an_object_that_lost_the_tag_its_forms_are_told_by_is_told_so():
    """A fresh clone's draw: an advice design that does not fit, its ``fits`` deleted, was said to miss ``label`` (the
    first form's first field) where what it lost was the tag both forms are told by."""
    from loadtest.results.advice_schema import Answer, Fits, FitsNot

    answer = {"family": "shard", "applies": True, "why_not": "no key takes 80 %", "curve": [], "cost": {}, "simulated": {}}
    assert set(Answer.__annotations__) <= set(answer) | {"fits"}
    for form in (Fits | FitsNot, FitsNot | Fits):  # whichever the union names first
        with pytest.raises(ValueError, match=r"^x\.fits: missing$"):
            read(form, answer, "x")
