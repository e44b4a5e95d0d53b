"""A CASE of hundreds of WHENs (Django's ``bulk_update`` writes one WHEN per row) answers
as MySQL does, in an UPDATE and in a view kept up to date; short ones compile to one nested
expression, long ones to one flat call (rivulet/values/control.py, ``first_branch``)."""

from __future__ import annotations

from mysql_oracle import MySQLPair

WHENS = 300


def _case(else_: str) -> str:
    whens = " ".join(f"WHEN (id = {i}) THEN 'v{i * 7 % 11}'" for i in range(WHENS))
    return f"CASE {whens} ELSE {else_} END"


def test_a_bulk_updates_case_of_hundreds_of_whens_writes_what_mysql_writes(
        mysql_pair: MySQLPair) -> None:
    mysql_pair.execute("CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(20), n INT)")
    mysql_pair.insert_many("t", [(i, f"x{i}", i % 5) for i in range(400)])
    ids = ", ".join(str(i) for i in range(0, 400, 3))
    mysql_pair.execute(f"UPDATE t SET s = {_case('s')} WHERE id IN ({ids})")
    mysql_pair.check_query("SELECT id, s FROM t ORDER BY id")


def test_a_view_with_a_long_case_stays_equal_to_mysql_as_rows_change(
        mysql_pair: MySQLPair) -> None:
    mysql_pair.execute("CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(20), n INT)")
    mysql_pair.insert_many("t", [(i, f"x{i}", i % 5) for i in range(350)])
    sql = f"SELECT n, {_case('NULL')} AS c, COUNT(*) AS k FROM t GROUP BY n, c"
    mysql_pair.create_view("long_case", sql)
    mysql_pair.check_query(sql)
    mysql_pair.check_view("long_case")
    mysql_pair.execute("DELETE FROM t WHERE id < 40")
    mysql_pair.execute("UPDATE t SET n = 7 WHERE id BETWEEN 100 AND 120")
    mysql_pair.execute("INSERT INTO t VALUES (5, 'again', 1), (999, 'beyond', 2)")
    mysql_pair.check_view("long_case")
