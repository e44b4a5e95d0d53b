"""Each kind of error, raised through the real paths, reported the same way by both servers.

Every kind in rivulet.errors is raised here as a user would make it happen (a statement
through ``db.execute``, a call on the Python API, a closed or failed database) and checked
for (a) its class and the public class it is caught as, (b) the MySQL error number and
SQLSTATE the MySQL server sends for it (``rivulet.server.errors.failure``) and (c) the HTTP
status and kind the HTTP API answers with: for a statement by sending it to ``POST /sql``,
elsewhere by the HTTP API's request where one is cheap, else from the table both servers
read (``rivulet.errors.error_code``). The kind is the class's, never the words of the message:
messages that contain "not null", "too long", "unknown", "exists" or "parameter" as a user's
value or name keep the code of what actually went wrong.
"""

from __future__ import annotations

import contextlib
import inspect
import threading
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest

import rivulet
import rivulet.engine.limits
from rivulet import errors
from rivulet.engine.views import View
from rivulet.errors import (
    ERROR_CODES,
    AggregateMisuseError,
    AmbiguousColumnError,
    ArgumentCountError,
    BrokenViewError,
    CatchUpTimeout,
    ClosedError,
    ConstraintError,
    DataflowFailedError,
    LimitError,
    NoSuchColumnError,
    NoTableToDropError,
    NotGroupedError,
    NotNullError,
    ObjectExistsError,
    OutOfRangeError,
    ParameterCountError,
    ParameterError,
    ProgramError,
    ReservedNameError,
    ResultTooLargeError,
    RivuletError,
    SchemaError,
    SqlError,
    SqlSyntaxError,
    StorageError,
    TooLongError,
    UnionWidthError,
    UnknownColumnError,
    UnknownFunctionError,
    UnknownObjectError,
    UnknownQualifierError,
    UnknownTableError,
    UnsupportedParameterError,
    UnsupportedSqlError,
    UpqueryTimeout,
    ValueCountError,
    error_code,
)
from rivulet.server.errors import SQLSTATES, failure
from rivulet.server.http.app import make_app
from rivulet.server.mysql.server import ServerThread

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Starlette's notice about httpx vs httpx2
    from starlette.testclient import TestClient

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

PROGRAM = """
CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(3) NOT NULL, n TINYINT, u INT, UNIQUE KEY (u));
CREATE TABLE a (id TINYINT AUTO_INCREMENT PRIMARY KEY, x INT);
CREATE TABLE unknown_things (id INT PRIMARY KEY);
CREATE TABLE exists_here (id INT PRIMARY KEY);
CREATE VIEW by_id AS SELECT id, n FROM t WHERE id = ?;
CREATE VIEW count_of AS SELECT COUNT(*) AS c FROM t WHERE id = ?;
CREATE VIEW things AS SELECT id FROM unknown_things;
CREATE VIEW here AS SELECT id FROM exists_here;
CREATE VIEW unknown_view AS SELECT id FROM unknown_things;
CREATE VIEW view_exists AS SELECT id FROM exists_here;
CREATE VIEW reads_them AS SELECT u.id FROM unknown_view u JOIN view_exists e ON u.id = e.id;
INSERT INTO t VALUES (1, 'a', 1, 1);
INSERT INTO a (id, x) VALUES (127, 1);
"""


@pytest.fixture
def db(tmp_path: Path) -> Iterator[rivulet.Database]:
    db = rivulet.open(tmp_path / "db")
    db.execute_script(PROGRAM)
    yield db
    db.close()


def client_for(db: rivulet.Database) -> TestClient:
    # Server exceptions are raised in the test: a 500 is always a bug here.
    return TestClient(make_app(db), raise_server_exceptions=True)


def raised(action: Callable[[], Any]) -> RivuletError:
    with pytest.raises(RivuletError) as caught:
        action()
    return caught.value


def check(exc: RivuletError, kind: type[RivuletError], parent: type[RivuletError],
          mysql: int, sqlstate: str, status: int, http_kind: str) -> None:
    """``exc`` is exactly a ``kind``, caught as ``parent``; the MySQL server would send
    ``mysql``/``sqlstate`` with its message, and the table gives ``status``/``http_kind``."""
    assert type(exc) is kind, (type(exc), exc)
    assert isinstance(exc, parent)
    assert failure(exc) == (mysql, sqlstate, str(exc))
    code = error_code(exc)
    assert (code.http_status, code.http_kind) == (status, http_kind)


def check_http(response: Any, status: int, http_kind: str, message: str) -> None:
    assert response.status_code == status, response.text
    assert response.json() == {"error": message, "kind": http_kind}


# --------------------------------------------------------------------------- statements

S = SqlError
P = ProgramError
V = SchemaError

#: (statement, its parameters, class, public parent, MySQL code, SQLSTATE, HTTP status, kind)
STATEMENTS = [
    # SQL: parse errors and what rivulet does not support
    ("SELEC id FROM t", [], SqlSyntaxError, S, 1064, "42000", 400, "sql"),
    ("SELCT 1", [], SqlSyntaxError, S, 1064, "42000", 400, "sql"),
    ("SELECT id FROM t ORDER BY n DESC NULLS FIRST", [], SqlSyntaxError, S, 1064, "42000", 400,
     "sql"),
    ("SELECT id FROM t WHERE id IN ()", [], SqlSyntaxError, S, 1064, "42000", 400, "sql"),
    ("GRANT ALL ON *.* TO someone", [], UnsupportedSqlError, S, 1235, "42000", 400,
     "unsupported_sql"),
    ("SELECT SOUNDEX(name) FROM t", [], UnsupportedSqlError, S, 1235, "42000", 400,
     "unsupported_sql"),
    # functions: a name MySQL lacks too, and a call with a wrong number of arguments
    ("SELECT parameter(id) FROM t", [], UnknownFunctionError, S, 1305, "42000", 400, "sql"),
    ("SELECT IFNULL(n) FROM t", [], ArgumentCountError, S, 1582, "42000", 400, "sql"),
    ("SELECT UPPER() FROM t", [], ArgumentCountError, S, 1582, "42000", 400, "sql"),
    # statements MySQL refuses with codes of their own
    ("SELECT id FROM t JOIN a ON t.id = a.id", [], AmbiguousColumnError, S, 1052, "23000", 400,
     "sql"),
    ("SELECT n, COUNT(*) FROM t", [], NotGroupedError, S, 1055, "42000", 400, "sql"),
    ("SELECT id FROM t WHERE COUNT(*) > 1", [], AggregateMisuseError, S, 1111, "HY000", 400,
     "sql"),
    ("SELECT COUNT(MAX(n)) FROM t", [], AggregateMisuseError, S, 1111, "HY000", 400, "sql"),
    ("INSERT INTO t VALUES (5)", [], ValueCountError, S, 1136, "21S01", 400, "sql"),
    ("SELECT id FROM t UNION SELECT id, n FROM t", [], UnionWidthError, S, 1222, "21000", 400,
     "sql"),
    # names a statement gives that do not exist
    ("SELECT nope FROM t WHERE id = 1", [], UnknownColumnError, S, 1054, "42S22", 400, "sql"),
    ("INSERT INTO t (id, nope) VALUES (2, 1)", [], UnknownColumnError, S, 1054, "42S22", 400,
     "sql"),
    ("UPDATE t SET nope = 1 WHERE id = 1", [], UnknownColumnError, S, 1054, "42S22", 400, "sql"),
    ("SELECT id FROM missing WHERE id = 1", [], UnknownTableError, S, 1146, "42S02", 400, "sql"),
    ("SELECT x.id FROM t", [], UnknownColumnError, S, 1054, "42S22", 400, "sql"),  # MySQL's
    ("SELECT x.* FROM t", [], UnknownQualifierError, S, 1051, "42S02", 400, "sql"),  # MariaDB's
    ("DELETE FROM t WHERE x.id = 1", [], UnknownColumnError, S, 1054, "42S22", 400, "sql"),
    # ? parameters
    ("INSERT INTO t VALUES (?, 'b', 2, 2)", [2, 3], ParameterCountError, S, 1210, "HY000", 400,
     "sql"),
    ("CREATE TABLE q (id INT PRIMARY KEY)", [1], ParameterCountError, S, 1210, "HY000", 400,
     "sql"),
    # (where MySQL takes a ? and rivulet keys no view by it: unsupported, 1235)
    ("SELECT id FROM (SELECT id FROM t WHERE id = ?) s", [1], UnsupportedParameterError, S, 1235,
     "42000", 400, "unsupported_sql"),
    ("SELECT c FROM count_of", [], ParameterError, S, 1210, "HY000", 400, "sql"),
    ("SELECT id FROM t WHERE id = ?", [], ParameterCountError, S, 1210, "HY000", 400, "sql"),
    ("SELECT id FROM t WHERE id + ? = 2", [1], UnsupportedParameterError, S, 1235, "42000", 400,
     "unsupported_sql"),
    ("SELECT id FROM t WHERE id = ? OR id IS NULL", [1], UnsupportedParameterError, S, 1235,
     "42000", 400, "unsupported_sql"),
    ("CREATE TABLE c AS SELECT id FROM t WHERE id = ?", [], ParameterError, S, 1210, "HY000",
     400, "sql"),
    # rows that break the schema
    ("INSERT INTO t (id, n) VALUES (2, 1)", [], NotNullError, V, 1048, "23000", 400, "schema"),
    ("INSERT INTO t VALUES (2, NULL, 1, 2)", [], NotNullError, V, 1048, "23000", 400, "schema"),
    ("INSERT INTO t VALUES (2, 'abcd', 1, 2)", [], TooLongError, V, 1406, "22001", 400, "schema"),
    ("UPDATE t SET name = 'abcd' WHERE id = 1", [], TooLongError, V, 1406, "22001", 400,
     "schema"),
    ("INSERT INTO t VALUES (2, 'b', 1000, 2)", [], OutOfRangeError, V, 1264, "22003", 400,
     "schema"),
    ("INSERT INTO a (x) VALUES (2)", [], OutOfRangeError, V, 1264, "22003", 400, "schema"),
    ("INSERT INTO t VALUES (2, 'b', 'zz', 2)", [], SchemaError, V, 1366, "HY000", 400, "schema"),
    # the words of a value are not the kind of the error
    ("INSERT INTO t VALUES (2, 'b', 'not null', 2)", [], SchemaError, V, 1366, "HY000", 400,
     "schema"),
    ("INSERT INTO t VALUES (2, 'b', 'too long', 2)", [], SchemaError, V, 1366, "HY000", 400,
     "schema"),
    ("INSERT INTO t VALUES (2, 'b', 'out of range', 2)", [], SchemaError, V, 1366, "HY000", 400,
     "schema"),
    # duplicate keys
    ("INSERT INTO t VALUES (1, 'b', 1, 2)", [], ConstraintError, ConstraintError, 1062, "23000",
     409, "constraint"),
    ("INSERT INTO t VALUES (2, 'b', 1, 1)", [], ConstraintError, ConstraintError, 1062, "23000",
     409, "constraint"),
    # changes to the program
    ("DROP VIEW missing", [], NoTableToDropError, P, 1051, "42S02", 404, "not_found"),  # MySQL 8's
    ("DROP TABLE missing", [], NoTableToDropError, P, 1051, "42S02", 404, "not_found"),
    ("DROP TABLE by_id", [], NoTableToDropError, P, 1051, "42S02", 404, "not_found"),  # a view
    ("ALTER TABLE missing ADD COLUMN z INT", [], UnknownObjectError, P, 1146, "42S02", 404,
     "not_found"),
    ("CREATE TABLE t (id INT PRIMARY KEY)", [], ObjectExistsError, P, 1050, "42S01", 409,
     "conflict"),
    ("CREATE VIEW by_id AS SELECT id FROM t", [], ObjectExistsError, P, 1050, "42S01", 409,
     "conflict"),
    ("CREATE VIEW t AS SELECT id FROM t", [], ObjectExistsError, P, 1050, "42S01", 409,
     "conflict"),
    ("CREATE TABLE _rivulet_x (id INT PRIMARY KEY)", [], ReservedNameError, P, 1105, "HY000",
     400, "bad_request"),
    ("DROP VIEW things, unknown_view", [], ProgramError, P, 1105, "HY000", 409, "conflict"),
    # names that contain "unknown" or "exists" are not the kind of the error
    ("DROP VIEW unknown_view", [], ProgramError, P, 1105, "HY000", 409, "conflict"),
    ("DROP VIEW view_exists", [], ProgramError, P, 1105, "HY000", 409, "conflict"),
]


@pytest.mark.parametrize(("sql", "params", "kind", "parent", "mysql", "sqlstate", "status",
                          "http_kind"), STATEMENTS, ids=[s[0] for s in STATEMENTS])
def test_statement_errors_have_their_class_mysql_code_and_http_status(
        db: rivulet.Database, sql: str, params: list[Any], kind: type[RivuletError],
        parent: type[RivuletError], mysql: int, sqlstate: str, status: int,
        http_kind: str) -> None:
    lsn = db.lsn
    exc = raised(lambda: db.execute(sql, params))
    check(exc, kind, parent, mysql, sqlstate, status, http_kind)
    assert db.lsn == lsn
    # The HTTP API runs the same statement the same way, and answers with the table's entry.
    check_http(client_for(db).post("/sql", json={"sql": sql, "params": params}), status,
               http_kind, str(exc))


def test_statement_errors_over_the_mysql_protocol_have_the_tables_codes(
        db: rivulet.Database) -> None:
    """The MySQL server itself sends each statement's code (a sample of the kinds, over a
    real connection); its own paths (text queries, SHOW) raise the same classes."""
    running = ServerThread(db, port=0)
    try:
        conn = pymysql.connect(host="127.0.0.1", port=running.port, user="root", password="",
                               autocommit=True)
        cases = [
            ("SELECT nope FROM t WHERE id = 1", 1054),
            ("SELECT id FROM missing WHERE id = 1", 1146),
            ("SELECT id FROM t WHERE id = ?", 1210),  # a '?' in a text query
            ("INSERT INTO t (id, n) VALUES (2, 1)", 1048),
            ("INSERT INTO t VALUES (2, 'abcd', 1, 2)", 1406),
            ("INSERT INTO t VALUES (2, 'b', 1000, 2)", 1264),
            ("INSERT INTO t VALUES (2, 'b', 'not null', 2)", 1366),
            ("INSERT INTO t VALUES (1, 'b', 1, 2)", 1062),
            ("SHOW CREATE TABLE missing", 1146),
            ("DESCRIBE missing", 1146),
            ("CREATE TABLE t (id INT PRIMARY KEY)", 1050),
            ("DROP VIEW unknown_view", 1105),
            ("DROP VIEW view_exists", 1105),
            ("DROP TABLE missing", 1051),
            ("SELECT x.* FROM a", 1051),
            ("CREATE TABLE _rivulet_x (id INT PRIMARY KEY)", 1105),
            ("SELCT 1", 1064),
            ("SELECT 1 * FROM t", 1064),
            ("SELECT id FROM t ORDER BY n NULLS LAST", 1064),
            ("SELECT nope(id) FROM t", 1305),
            ("SELECT LENGTH(name, 1) FROM t", 1582),
            ("SELECT SOUNDEX(name) FROM t", 1235),
            ("SELECT SOUNDEX('x') + 1", 1235),  # no FROM: rivulet's, not mimic's
            ("DROP TABLE a, missing", 1051),  # (a dropped, as MariaDB drops it)
            ("SELECT * FROM a", 1146),  # (gone)
        ]
        with conn.cursor() as cursor:
            for sql, code in cases:
                with pytest.raises(pymysql.err.MySQLError) as caught:
                    cursor.execute(sql)
                assert caught.value.args[0] == code, (sql, caught.value.args)
        conn.close()
    finally:
        running.stop()


def test_a_read_of_a_view_whose_table_is_gone_is_mysqls_1356(db: rivulet.Database) -> None:
    """``DROP TABLE`` of a table views read drops it; the views stay, and every read of
    one (a statement, the API's handle, the HTTP API, the MySQL server) is MySQL's 1356."""
    db.execute("DROP TABLE unknown_things")
    message = ("View 'rivulet.things' references invalid table(s) or column(s) or "
               "function(s) or definer/invoker of view lack rights to use them")
    for read in (lambda: db.execute("SELECT id FROM things"), lambda: db.view("things")):
        exc = raised(read)
        check(exc, BrokenViewError, ProgramError, 1356, "HY000", 409, "conflict")
        assert str(exc) == message
    check_http(client_for(db).post("/sql", json={"sql": "SELECT id FROM things"}), 409,
               "conflict", message)
    running = ServerThread(db, port=0)
    try:
        conn = pymysql.connect(host="127.0.0.1", port=running.port, user="root", password="",
                               autocommit=True)
        with conn.cursor() as cursor:
            for sql in ("SELECT id FROM things", "SELECT * FROM reads_them"):
                with pytest.raises(pymysql.err.MySQLError) as caught:
                    cursor.execute(sql)
                assert caught.value.args[0] == 1356, (sql, caught.value.args)
        conn.close()
    finally:
        running.stop()


# --------------------------------------------------------------------------- calls


def test_a_row_naming_no_column_is_a_schema_error_not_a_sql_one(db: rivulet.Database) -> None:
    row = {"id": 2, "name": "b", "zz": 1}
    exc = raised(lambda: db.table("t").insert(row))
    check(exc, NoSuchColumnError, SchemaError, 1054, "42S22", 400, "schema")
    check_http(client_for(db).post("/tables/t/rows", json=[row]), 400, "schema", str(exc))
    # Named in a statement instead, the same mistake is a SQL error (with a position).
    exc = raised(lambda: db.table("t").update("id = 1", zz=1))
    check(exc, UnknownColumnError, SqlError, 1054, "42S22", 400, "sql")


def test_the_api_naming_no_view_or_table_is_an_unknown_object(db: rivulet.Database) -> None:
    for call in (lambda: db.view("missing"), lambda: db.table("missing"),
                 lambda: db.drop_view("missing"), lambda: db.drop_table("missing")):
        exc = raised(call)
        check(exc, UnknownObjectError, ProgramError, 1146, "42S02", 404, "not_found")
    assert client_for(db).get("/views/missing", params={"key": 1}).status_code == 404


def test_a_key_of_the_wrong_width_is_a_parameter_count_error_over_http_too(
        db: rivulet.Database) -> None:
    exc = raised(lambda: db.view("by_id").lookup_many([(1, 2)]))
    check(exc, ParameterCountError, RivuletError, 1210, "HY000", 400, "sql")
    check_http(client_for(db).post("/views/by_id/lookup", json=[[1, 2]]), 400, "sql",
               str(exc))


def test_a_plain_rivulet_error_is_unknown_to_mysql_and_a_bad_request_over_http(
        db: rivulet.Database) -> None:
    with _plain_error_from_lookup_many():
        exc = raised(lambda: db.view("by_id").lookup_many([(1,)]))
        check(exc, RivuletError, RivuletError, 1105, "HY000", 400, "bad_request")
        check_http(client_for(db).post("/views/by_id/lookup", json=[[1]]), 400, "bad_request",
                   str(exc))


def test_limits_are_limit_errors_and_an_answer_too_large_is_mysqls_too_big_select(
        tmp_path: Path) -> None:
    limits = rivulet.Limits(max_statement_chars=2000, max_result_rows=2)
    with rivulet.open(tmp_path / "db", limits=limits) as db:
        db.execute_script(PROGRAM)
        long = "SELECT id FROM t WHERE id = 1" + " " * 2000
        exc = raised(lambda: db.execute(long))
        check(exc, LimitError, LimitError, 1105, "HY000", 400, "limit")
        check_http(client_for(db).post("/sql", json={"sql": long}), 400, "limit", str(exc))

        db.execute("INSERT INTO t VALUES (2, 'b', 2, 2), (3, 'c', 3, 3)")
        exc = raised(lambda: db.limits.check_result(len(db.query("SELECT id FROM t"))))
        check(exc, ResultTooLargeError, LimitError, 1104, "42000", 400, "limit")
        check_http(client_for(db).post("/sql", json={"sql": "SELECT id FROM t"}), 400, "limit",
                   str(exc))
        running = ServerThread(db, port=0)
        try:
            conn = pymysql.connect(host="127.0.0.1", port=running.port, user="root",
                                   password="", autocommit=True)
            with conn.cursor() as cursor, pytest.raises(pymysql.err.MySQLError) as caught:
                cursor.execute("SELECT id FROM t")
            assert caught.value.args == (1104, str(exc))
            conn.close()
        finally:
            running.stop()


def test_limit_error_is_one_class_wherever_it_is_imported_from() -> None:
    assert rivulet.LimitError is rivulet.engine.limits.LimitError is errors.LimitError
    assert issubclass(rivulet.engine.limits.ResultTooLargeError, rivulet.LimitError)


def test_a_closed_database_is_mysqls_shutdown_and_http_503(db: rivulet.Database) -> None:
    client = client_for(db)
    db.close()
    exc = raised(lambda: db.execute("SELECT id FROM t WHERE id = 1"))
    check(exc, ClosedError, ClosedError, 1053, "08S01", 503, "closed")
    check_http(client.post("/sql", json={"sql": "SELECT id FROM t WHERE id = 1"}), 503,
               "closed", str(exc))


class Held:
    """A hook that holds the propagation thread (which holds the graph lock) until released."""

    def __init__(self) -> None:
        self.reached = threading.Event()
        self.release = threading.Event()

    def __call__(self) -> None:
        self.reached.set()
        self.release.wait(10)


def test_reads_and_waits_that_time_out_while_the_dataflow_is_busy(tmp_path: Path) -> None:
    with rivulet.open(tmp_path / "db", upquery_timeout=0.1) as db:
        db.execute_script(PROGRAM)
        db.settle()
        held = Held()
        db.hooks["before_propagate"] = held
        try:
            db.execute("INSERT INTO t VALUES (2, 'b', 2, 2)")
            assert held.reached.wait(10)
            exc = raised(lambda: db.view("by_id").lookup(5))  # a miss: an upquery
            check(exc, UpqueryTimeout, UpqueryTimeout, 3024, "HY000", 503, "timeout")
            response = client_for(db).get("/views/by_id", params={"key": 6})
            assert response.status_code == 503 and response.json()["kind"] == "timeout"

            exc = raised(lambda: db.settle(0.05))
            check(exc, CatchUpTimeout, RivuletError, 1105, "HY000", 503, "timeout")
        finally:
            held.release.set()
        db.settle()


def test_a_failed_dataflow_is_503_failed(db: rivulet.Database) -> None:
    def boom() -> None:
        raise RuntimeError("injected propagation failure")

    db.hooks["before_propagate"] = boom
    db.execute("INSERT INTO t VALUES (2, 'b', 2, 2)")  # durable; its propagation fails
    exc = raised(lambda: db.settle(10))
    check(exc, DataflowFailedError, RivuletError, 1105, "HY000", 503, "failed")
    check_http(client_for(db).post("/sql", json={"sql": "SELECT id FROM t WHERE id = ?",
                                                 "params": [1]}), 503, "failed", str(exc))
    # While the dataflow has failed, an error of no more specific kind is answered as the
    # failure too (the HTTP API's one rule of its own).
    with _plain_error_from_lookup_many():
        response = client_for(db).post("/views/by_id/lookup", json=[[1]])
    assert response.status_code == 503 and response.json()["kind"] == "failed"


@contextlib.contextmanager
def _plain_error_from_lookup_many() -> Iterator[None]:
    """``View.lookup_many`` raising a RivuletError of no more specific kind (the few left
    are hard to reach on purpose)."""
    def fail(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise RivuletError("a plain error")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(View, "lookup_many", fail)
        yield


def test_a_damaged_database_file_is_a_storage_error(tmp_path: Path) -> None:
    rivulet.open(tmp_path / "db").close()
    with open(tmp_path / "db" / "rivulet.db", "r+b") as f:
        f.write(b"not a database file" * 8)
    exc = raised(lambda: rivulet.open(tmp_path / "db", prewarm=False))
    check(exc, StorageError, StorageError, 1105, "HY000", 500, "storage")


# --------------------------------------------------------------------------- the table


def error_classes() -> list[type[BaseException]]:
    return [cls for _, cls in inspect.getmembers(errors, inspect.isclass)
            if issubclass(cls, BaseException) and cls.__module__ == errors.__name__]


def test_every_error_class_has_an_entry_in_the_table() -> None:
    classes = error_classes()
    assert RivuletError in classes and len(classes) >= 20
    missing = [cls.__name__ for cls in classes if cls not in ERROR_CODES]
    assert missing == []
    # and every class under RivuletError anywhere in rivulet.errors' hierarchy is one of them
    stack: list[type[BaseException]] = [RivuletError]
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if cls.__module__ == errors.__name__:
            assert cls in ERROR_CODES, cls


def test_the_table_is_documented_row_by_row_in_the_module_docstring() -> None:
    doc = errors.__doc__ or ""
    for cls, code in ERROR_CODES.items():
        if cls is BaseException:
            continue
        row = f"{cls.__name__:<26} {code.mysql:<6} {code.sqlstate:<9} {code.http_status:<5} " \
              f"{code.http_kind}"
        assert row in doc, row


def test_the_most_specific_class_with_an_entry_wins() -> None:
    class Narrower(NotNullError):
        """A kind with no entry of its own is reported as its parent."""

    assert error_code(Narrower("x")) is ERROR_CODES[NotNullError]
    assert error_code(NotNullError("x")) is not ERROR_CODES[SchemaError]
    assert error_code(ValueError("a bug")) is ERROR_CODES[BaseException]
    assert failure(ValueError("a bug")) == (1105, "HY000", "a bug")


def test_the_mysql_servers_sqlstates_agree_with_the_table() -> None:
    for code in ERROR_CODES.values():
        assert SQLSTATES[code.mysql] == code.sqlstate, code


def test_an_unknown_qualifier_is_an_unknown_column_as_in_mariadb(mysql_pair: Any) -> None:
    """``x.id`` where no table is ``x`` is MySQL's 1054 (unknown column), in a SELECT, a
    DELETE's and an UPDATE's WHERE, as MariaDB answers; it was 1146."""
    mysql_pair.execute("CREATE TABLE q (id INT PRIMARY KEY)")
    for sql in ["SELECT x.id FROM q", "DELETE FROM q WHERE x.id = 1",
                "UPDATE q SET id = 2 WHERE x.id = 1"]:
        with pytest.raises(pymysql.err.MySQLError) as theirs:
            with mysql_pair.conn.cursor() as cursor:
                cursor.execute(sql)
        with pytest.raises(UnknownColumnError) as ours:
            mysql_pair.db.execute(sql)
        assert theirs.value.args[0] == failure(ours.value)[0] == 1054, sql
