"""Tests for the rivulet.values package itself: its layering, its API and value kinds.

The semantics of the functions are tested in tests/test_functions.py; here, that the
modules import one way only (so the package has no import cycle), that the package
re-exports its API, and that :class:`Kind` behaves as the plain strings it replaced.
"""

from __future__ import annotations

import ast
import json
import pickle
from pathlib import Path

import rivulet.values as F
from rivulet.plan import ir
from rivulet.values.schema import (
    BOOL,
    DATETIME,
    INT,
    KINDS,
    SQL_TYPE_KINDS,
    STR,
    Column,
    Kind,
    TableSchema,
    coerce_row,
    coerce_value,
)

#: The modules of rivulet.values, bottom first: each may import only those before it.
LAYERS = ["enumerations", "times", "datetexts", "numerals", "conversions", "json_text",
          "json_containment", "clock", "schema", "types", "logic", "comparison", "matching",
          "arithmetic", "like", "control", "strings", "numeric", "dates", "intervals",
          "date_format", "bits", "powers",
          "regexps", "codes", "ordering", "casts", "registry"]


def _imports(module: str) -> set[str]:
    path = Path(F.__file__).parent / f"{module}.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("rivulet.values."):
                found.add(node.module.removeprefix("rivulet.values."))
            elif node.module.startswith("rivulet") and node.module != "rivulet.errors":
                found.add(node.module)
            for alias in node.names:
                if alias.name.startswith("_"):
                    found.add(f"private name {alias.name}")
    return found


def test_modules_import_one_way() -> None:
    on_disk = {p.stem for p in Path(F.__file__).parent.glob("*.py")} - {"__init__"}
    assert on_disk == set(LAYERS)
    for i, module in enumerate(LAYERS):
        assert _imports(module) <= set(LAYERS[:i]), module


def test_package_exports_its_api() -> None:
    for name in F.__all__:
        assert getattr(F, name) is not None, name
    assert F.OPERATORS["="] is F.eq
    assert F.SCALAR_FUNCTIONS["SUBSTR"] is F.substring
    assert F.CASTS["cast_int"] is F.cast_int
    assert F.arity_error("LEFT", 1) is not None


def test_kind_is_the_string_it_replaced() -> None:
    assert INT is Kind.INT and KINDS == tuple(Kind)
    assert INT == "int" and hash(DATETIME) == hash("datetime")
    assert {"int": 1}[INT] == 1 and {INT: 1}["int"] == 1
    assert str(STR) == f"{STR}" == "%s" % STR == "str"  # noqa: UP031 (%-formatting tested)
    assert json.dumps({BOOL: BOOL}) == '{"bool": "bool"}'
    assert SQL_TYPE_KINDS["VARCHAR"] is Kind.STR


def test_kinds_from_plain_strings_still_work() -> None:
    """A kind given as a plain string (older code or data) checks values the same way."""
    old = Column("n", "int")  # type: ignore[arg-type]
    assert coerce_value(old, "5") == coerce_value(Column("n", INT), "5") == 5


def test_schema_pickles() -> None:
    schema = TableSchema("t", (Column("id", INT, nullable=False), Column("s", STR)), (0,))
    again = pickle.loads(pickle.dumps(schema))
    assert again == schema and again.columns[0].kind is Kind.INT
    assert coerce_row(again, (1, "x")) == (1, "x")


def test_plan_signatures_spell_kinds_as_strings() -> None:
    """Join order depends on plan signatures: the enum must not change them."""
    plain = ir.Lit(1, "int")  # type: ignore[arg-type]
    assert ir._signature(ir.Lit(1, INT)) == ir._signature(plain) == "Lit(1,'int')"
