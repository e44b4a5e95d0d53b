"""``DUAL``: MySQL's name for no table (``SELECT 1 FROM DUAL`` is ``SELECT 1``).

A reserved word in MySQL, so no table is named so unless the name is quoted
(``CREATE TABLE `dual` ...``): a quoted, qualified or aliased ``dual`` is a table.
"""

from __future__ import annotations

from sqlglot import exp


def is_dual(item: exp.Expr) -> bool:
    """Whether a FROM item is ``DUAL``."""
    return (isinstance(item, exp.Table) and not item.args.get("db") and not item.alias
            and not item.this.args.get("quoted") and item.name.upper() == "DUAL")
