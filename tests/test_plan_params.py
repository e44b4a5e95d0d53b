"""A view's ``?`` values by the plan's parameter numbers (rivulet.plan.params).

The engine's read handles and the Spark executor both read a view through
``values_by_param``: an ``IN (?, ...)`` list takes any number of values in place of its
placeholders, and the parameters after it move along. These pin that, and the errors
for a wrong number of values, once for both.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import rivulet
from rivulet.errors import RivuletError
from rivulet.plan import ir
from rivulet.plan.params import values_by_param


def plan_of(tmp_path: Path, where: str) -> ir.ViewPlan:
    with rivulet.open(tmp_path / "db") as db:
        db.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT)")
        db.execute(f"CREATE VIEW v AS SELECT id FROM t WHERE {where}")
        return db.view("v").plan


def test_parameters_without_an_in_list_are_numbered_in_order(tmp_path: Path) -> None:
    plan = plan_of(tmp_path, "a = ? AND b = ?")
    assert values_by_param(plan, (1, 2)) == {0: 1, 1: 2}
    with pytest.raises(RivuletError, match="takes 2 parameter"):
        values_by_param(plan, (1,))


def test_an_in_list_takes_any_number_of_values_and_moves_the_rest(tmp_path: Path) -> None:
    plan = plan_of(tmp_path, "b IN (?, ?) AND a = ?")
    assert values_by_param(plan, (7, 8, 9, 5)) == {2: 5, "in": [7, 8, 9]}
    assert values_by_param(plan, (7, 5)) == {2: 5, "in": [7]}
    with pytest.raises(RivuletError, match="at least one IN value"):
        values_by_param(plan, (5,))
