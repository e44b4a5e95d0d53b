"""The optimizer's rules (rivulet/plan/optimize.py) on fixtures, in the sqlglot style.

``tests/fixtures/passes/<rule>.txt`` holds cases of one rule: a comment saying what the
case shows, a SELECT planned against ``schema.sql``, a line ``----``, and the plan the rule
makes of it as :func:`rivulet.plan.describe.describe` writes it; a blank line between
cases. ``optimize.txt`` holds cases of every rule in order. Each rule gets the options it
takes from the same program (``views``: the schema's views as planned).

Beside the fixtures: what every rule keeps (the root's columns and how the view is read),
that a plan is optimized once, the options, and that a view planned before an ALTER TABLE
is optimized later exactly as it was built.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import pytest

import rivulet
from rivulet.plan import ir
from rivulet.plan.catalog import Catalog
from rivulet.plan.describe import describe
from rivulet.plan.optimize import RULES, Rule, optimize, rules_except
from rivulet.sql.parse import split_statements

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "passes"
RULE_NAMES = [rule.__name__ for rule in RULES]


@dataclass(frozen=True)
class Case:
    title: str
    sql: str
    expected: str
    line: int  # where the case starts in its file

    def __str__(self) -> str:
        return f"line {self.line}: {self.title}"


def read_cases(path: Path) -> list[Case]:
    """The cases of a fixture file (see the module's docstring)."""
    cases: list[Case] = []
    blocks: list[tuple[int, list[str]]] = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            blocks.append((number + 1, []))
        elif not blocks:
            blocks.append((number, [line]))
        else:
            blocks[-1][1].append(line)
    for start, lines in blocks:
        if not lines:
            continue
        comments = [ln[1:].strip() for ln in lines if ln.startswith("#")]
        body = [ln for ln in lines if not ln.startswith("#")]
        assert "----" in body, f"{path.name}:{start}: a case needs a '----' line"
        split = body.index("----")
        cases.append(Case(" ".join(comments), " ".join(body[:split]),
                          "\n".join(body[split + 1:]), start))
    return cases


def program() -> Catalog:
    return Catalog.from_sql(*split_statements((FIXTURES / "schema.sql").read_text()))


def run(rules: tuple[Rule, ...], sql: str) -> tuple[ir.ViewPlan, ir.ViewPlan]:
    """The view ``sql`` as planned, and after ``rules`` with the program's options."""
    catalog = program()
    planned = catalog.plan(sql)
    return planned, optimize(planned, rules, views=list(catalog.views.values()))


def _fixtures() -> list[tuple[str, Case]]:
    out = []
    for name in [*RULE_NAMES, "optimize"]:
        out += [(name, case) for case in read_cases(FIXTURES / f"{name}.txt")]
    return out


def _rules(name: str) -> tuple[Rule, ...]:
    return RULES if name == "optimize" else tuple(r for r in RULES if r.__name__ == name)


# --------------------------------------------------------------------------- fixtures


def test_every_rule_has_fixtures() -> None:
    for name in RULE_NAMES:
        assert len(read_cases(FIXTURES / f"{name}.txt")) >= 3, name


@pytest.mark.parametrize("name, case", _fixtures(), ids=lambda v: str(v)[:60])
def test_fixture(name: str, case: Case) -> None:
    _, plan = run(_rules(name), case.sql)
    assert describe(plan) == case.expected, f"{name}.txt {case}"


@pytest.mark.parametrize("name, case", _fixtures(), ids=lambda v: str(v)[:60])
def test_rules_keep_what_readers_see(name: str, case: Case) -> None:
    """A rule rewrites the relation, never what it answers: the root's columns (names,
    kinds, nullability) and every field of how the view is read stay as planned."""
    planned, plan = run(_rules(name), case.sql)
    assert plan.root.columns == planned.root.columns
    assert replace(plan, root=planned.root) == planned


# --------------------------------------------------------------------------- optimize()


def test_a_plan_is_optimized_once() -> None:
    """The record of the rules run is what makes optimize() safe to call on any plan:
    run again, eager aggregation would aggregate its own two-step partial aggregates."""
    sql = ("SELECT s.author, COUNT(*) AS n FROM stories s JOIN votes v "
           "ON s.id = v.story_id GROUP BY s.author")
    planned, plan = run(RULES, sql)
    assert planned.optimized is None
    assert plan.optimized == tuple(RULE_NAMES)
    assert optimize(plan) is plan
    again = optimize(replace(plan, optimized=None))
    assert len([n for n in ir.walk(again.root) if isinstance(n, ir.Aggregate)]) == 3


def test_each_rule_gets_only_its_options() -> None:
    catalog = program()
    planned = catalog.plan("SELECT id FROM stories WHERE hidden = 0")
    pruned = optimize(planned, rules_except({"eager_aggregation"}), views=[])
    assert pruned.optimized == ("push_filters", "prune")
    with pytest.raises(TypeError, match="viewz"):
        optimize(planned, viewz=[])
    with pytest.raises(ValueError, match="prunee"):
        rules_except({"prunee"})


def test_a_view_planned_before_alter_table_is_optimized_as_built(tmp_path: Path) -> None:
    """The primary key eager aggregation needs is the scanned table version's, kept in the
    plan: optimizing a view's plan again after its table changed gives the plan it was
    built from (the engine's catalog keeps views as planned)."""
    with rivulet.open(tmp_path) as db:
        db.execute_script((FIXTURES / "schema.sql").read_text())
        db.execute("CREATE VIEW per_story AS SELECT s.id, s.title, COUNT(*) AS n "
                   "FROM stories s LEFT JOIN votes v ON s.id = v.story_id "
                   "WHERE s.id = ? GROUP BY s.id")
        built = db.view("per_story").plan
        assert any(isinstance(n, ir.Aggregate) and isinstance(n.input, (ir.Scan, ir.Project))
                   and n.group_by == (0,) for n in ir.walk(built.root))  # votes counted first
        db.execute("ALTER TABLE stories ADD COLUMN body TEXT")
        planned = db.catalog.view("per_story")
        assert planned is not None
        views = [v for v in db.catalog.views.values() if v is not planned]
        assert optimize(planned, views=views) == built
