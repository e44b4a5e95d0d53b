"""The optimizer: the rules that turn a view as the planner wrote it into the plan every
executor runs, in one ordered tuple, run by one :func:`optimize`.

Modelled on sqlglot's optimizer: one rule per module, each a function
``rule(plan, **only the options it needs) -> plan`` over the frozen IR (it returns a new
plan, or the same object when it changes nothing); :data:`RULES` orders them, and
:func:`optimize` runs them in that order, giving each rule the options its signature names.

The executors compile what ``optimize()`` makes: the dataflow builder
(rivulet/dataflow/builder.py), the Spark compiler (rivulet/spark/compile.py) and the
streaming pipeline (rivulet/pipeline/streaming/database.py). A backend that cannot run a
rule names it in a set of its own and runs :func:`rules_except` of it.

The order, and why:

1. :func:`~rivulet.plan.eager.eager_aggregation`: an aggregate over a join computed on one
   side first. It reads the plan as written: the kept side of its per-row rewrite must be
   a table's ``Scan`` (pruning would put a projection over it), and a WHERE condition
   still between join and aggregate keeps the aggregate as written.
2. :func:`~rivulet.plan.pushdown.push_filters`: each WHERE conjunct as low as its columns
   allow, including into the joins eager aggregation made.
3. :func:`~rivulet.plan.prune.prune`: each scan narrowed to the columns read. Last, since
   the rules before it add and move the readers of columns.

A plan is optimized once. Running the rules on their own output is not a no-op: eager
aggregation would aggregate its two-step partial aggregates again, and would find joins
that pushdown cleared of filters and scans that pruning hid. The engine hands plans of
both kinds around (the catalog keeps views as planned, so that a view read in FROM is
optimized with its reader as it is alone; a view handle has the plan as built), so a plan
records the rules it went through (``ViewPlan.optimized``) and ``optimize()`` returns an
optimized plan as it is.

Options (each named by the rules that take it):

* ``views``: the program's views as planned (the catalog's), for eager aggregation, which
  asks which aggregates a view without a key holds in full.

>>> from rivulet.plan.catalog import Catalog
>>> from rivulet.plan.describe import describe
>>> catalog = Catalog.from_sql(
...     "CREATE TABLE s (id INT PRIMARY KEY, title TEXT, body TEXT)",
...     "CREATE TABLE v (uid INT NOT NULL, sid INT NOT NULL, at INT)")
>>> plan = catalog.plan("SELECT s.title, COUNT(*) AS n FROM s LEFT JOIN v ON v.sid = s.id "
...                     "WHERE s.id = ? GROUP BY s.id")
>>> print(describe(plan))
Project title, n := count(*), id
  Aggregate by id, title: count(*)
    Project id, title
      Join left on id = sid
        Scan s
        Scan v
>>> optimized = optimize(plan)
>>> print(describe(optimized))
Project title, n := COALESCE(count_0, 1), id
  Join left on id = sid
    Project id, title
      Scan s
    Aggregate by sid: count(*)
      Project sid
        Scan v
>>> optimized.optimized
('eager_aggregation', 'push_filters', 'prune')
>>> optimize(optimized) is optimized
True
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection
from dataclasses import replace
from functools import cache
from typing import Any

from rivulet.plan import ir
from rivulet.plan.eager import eager_aggregation
from rivulet.plan.prune import prune
from rivulet.plan.pushdown import push_filters

#: A rule: ``rule(plan, **options) -> plan``.
Rule = Callable[..., ir.ViewPlan]

#: The rules, in the order they run.
RULES: tuple[Rule, ...] = (eager_aggregation, push_filters, prune)


def optimize(plan: ir.ViewPlan, rules: tuple[Rule, ...] = RULES,
             **options: Any) -> ir.ViewPlan:
    """``plan`` with ``rules`` run on it in order, each given the ``options`` its
    signature names; a plan optimized already is returned as it is (see the module's
    docstring). An option that no rule of :data:`RULES` takes is an error (a misspelt
    option would otherwise be dropped without a word)."""
    unknown = set(options) - set().union(*(_options(rule) for rule in RULES))
    if unknown:
        raise TypeError(f"no optimizer rule takes the option(s) {', '.join(sorted(unknown))}")
    if plan.optimized is not None:
        return plan
    for rule in rules:
        plan = rule(plan, **{k: v for k, v in options.items() if k in _options(rule)})
    return replace(plan, optimized=tuple(rule.__name__ for rule in rules))


def rules_except(skipped: Collection[str]) -> tuple[Rule, ...]:
    """:data:`RULES` without those named in ``skipped`` (a backend's rules that cannot run
    on it), in order; a name that is no rule's is an error.

    >>> [rule.__name__ for rule in rules_except({"push_filters"})]
    ['eager_aggregation', 'prune']
    """
    names = {rule.__name__ for rule in RULES}
    unknown = set(skipped) - names
    if unknown:
        raise ValueError(f"no optimizer rule named {', '.join(sorted(unknown))}")
    return tuple(rule for rule in RULES if rule.__name__ not in skipped)


@cache
def _options(rule: Rule) -> frozenset[str]:
    """The keyword options ``rule`` takes: its parameters after the plan."""
    parameters = list(inspect.signature(rule).parameters.values())[1:]
    return frozenset(p.name for p in parameters
                     if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
