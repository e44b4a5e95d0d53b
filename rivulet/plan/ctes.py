"""Common table expressions: ``WITH x AS (SELECT ...), y AS (...) SELECT ... FROM x JOIN y``.

A CTE is planned as the derived table it names (a subquery in FROM, ``(SELECT ...) AS
x``): MySQL merges it into the query around it or materializes it on the same rules, and
the dataflow maintains it as any sub-plan, incrementally and shared. It is planned once,
on its first reference; every reference reads that one plan, so a CTE named twice is one
sub-plan (the dataflow builder then builds its operators once).

Scoping is MySQL's for a non-recursive WITH: the query after the WITH, and the subqueries
in its FROM, see every CTE of it (a CTE's name hides a table or view of that name); a CTE's
own query sees the CTEs before it in its WITH (and those of the WITHs around it), not
itself nor those after it, whose names then name tables. ``WITH RECURSIVE`` is refused
by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from rivulet.errors import SqlError
from rivulet.plan import ir
from rivulet.sql.parse import error_at, unsupported


@dataclass
class Cte:
    """One CTE of a WITH clause, planned on its first reference (:attr:`planned`)."""

    name: str
    query: exp.Expr
    #: The column names written after its name (``WITH x (a, b) AS ...``), if any.
    columns: list[str] | None
    #: The CTEs its own query may name (lower-case names).
    seen: dict[str, Cte]
    #: Its plan and its columns' names, once a reference planned it.
    planned: tuple[ir.Node, list[str]] | None = field(default=None, repr=False)


def defined(with_: exp.With, outer: dict[str, Cte]) -> dict[str, Cte]:
    """The CTEs the query after ``with_`` sees: ``outer`` (those of the WITHs around it)
    and the ones ``with_`` defines, by lower-case name."""
    if with_.args.get("recursive"):
        raise unsupported(with_, "WITH RECURSIVE")
    ctes = dict(outer)
    own: set[str] = set()
    for cte in with_.expressions:
        name = cte.alias_or_name
        if name.lower() in own:
            raise error_at(cte, f"common table expression {name!r} is defined twice in one "
                           "WITH", SqlError)
        own.add(name.lower())
        alias = cte.args.get("alias")
        columns = [c.name for c in alias.columns] if alias is not None and alias.columns \
            else None
        ctes[name.lower()] = Cte(name, cte.this, columns, dict(ctes))
    return ctes


def named_columns(cte: Cte, names: list[str]) -> list[str]:
    """The names of ``cte``'s columns: those written after its name, if any (as many as
    its query has), else its query's."""
    if cte.columns is None:
        return names
    if len(cte.columns) != len(names):
        raise SqlError(f"common table expression {cte.name!r} names {len(cte.columns)} "
                       f"column(s) for a SELECT of {len(names)}")
    return list(cte.columns)
