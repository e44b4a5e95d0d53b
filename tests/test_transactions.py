"""Transactions in the Python API (``with db.transaction() as tx:``): all or nothing, one
batch with one LSN, the transaction's own writes visible to it and to nobody else before
COMMIT, savepoints, a failed statement undone alone, no update lost silently
(docs/transactions.md). Over MySQL: tests/test_transactions_mysql.py."""

from __future__ import annotations

import random
import sqlite3
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

import rivulet
from rivulet.errors import (
    ConstraintError,
    NoSuchSavepointError,
    NotNullError,
    ProgramError,
    ReadOnlyWriteError,
    TransactionError,
    WriteConflictError,
)
from rivulet.server.http.app import make_app

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Starlette's notice about httpx vs httpx2
    from starlette.testclient import TestClient

PROGRAM = """
CREATE TABLE accounts (id INT PRIMARY KEY, owner VARCHAR(20) NOT NULL, balance INT NOT NULL,
                       email VARCHAR(40), UNIQUE KEY (email));
CREATE TABLE moves (id INT AUTO_INCREMENT PRIMARY KEY, account INT NOT NULL, amount INT NOT NULL);
CREATE TABLE notes (account INT, body VARCHAR(40));
CREATE VIEW balance AS SELECT id, owner, balance FROM accounts WHERE id = ?;
CREATE VIEW total AS SELECT SUM(balance) AS money, COUNT(*) AS accounts FROM accounts;
CREATE VIEW history AS SELECT a.owner, m.amount FROM accounts a JOIN moves m ON m.account = a.id
    WHERE a.id = ? ORDER BY m.id;
CREATE VIEW per_owner AS SELECT owner, COUNT(*) AS n FROM accounts GROUP BY owner;
"""


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "db"


@pytest.fixture
def db(path: Path) -> Iterator[rivulet.Database]:
    database = rivulet.open(path)
    database.execute_script(PROGRAM)
    database.execute("INSERT INTO accounts VALUES (1, 'ann', 100, 'ann@x'), "
                     "(2, 'bob', 50, 'bob@x')")
    database.settle()
    yield database
    database.close()


def accounts(db: rivulet.Database) -> list[tuple]:
    db.settle()
    return db.query("SELECT id, owner, balance, email FROM accounts ORDER BY id")


# ......................................................................... all or nothing


def test_a_rolled_back_transaction_leaves_nothing_anywhere(db: rivulet.Database,
                                                           path: Path) -> None:
    before, lsn = accounts(db), db.lsn
    with pytest.raises(RuntimeError), db.transaction() as tx:
        tx.execute("UPDATE accounts SET balance = balance - 30 WHERE id = 1")
        tx.execute("INSERT INTO moves (account, amount) VALUES (1, -30)")
        tx.execute("DELETE FROM accounts WHERE id = 2")
        raise RuntimeError("the block fails")
    tx = db.transaction()
    tx.execute("INSERT INTO accounts VALUES (3, 'cy', 1, NULL)")
    tx.rollback()
    assert accounts(db) == before
    assert db.query("SELECT COUNT(*) FROM moves") == [(0,)]
    assert db.view("total").lookup() == [(150, 2)]
    assert db.lsn == lsn  # nothing was stored, not even an empty batch
    db.close()
    with rivulet.open(path) as again:
        assert accounts(again) == before


def test_a_commit_is_one_batch_with_one_lsn_and_durable(db: rivulet.Database,
                                                        path: Path) -> None:
    lsn = db.lsn
    batches: list[int] = []
    db.commit_listeners.append(batches.append)
    with db.transaction() as tx:
        tx.execute("UPDATE accounts SET balance = balance - 30 WHERE id = 1")
        tx.execute("UPDATE accounts SET balance = balance + 30 WHERE id = 2")
        tx.execute("INSERT INTO moves (account, amount) VALUES (1, -30), (2, 30)")
        tx.execute("INSERT INTO notes VALUES (1, 'transfer')")
    assert db.lsn == lsn + 1 and batches == [lsn + 1] and tx.lsn == lsn + 1
    db.wait_for(tx.lsn)
    assert db.view("total").lookup() == [(150, 2)]
    assert db.view("history").lookup(2) == [("bob", 30)]
    assert accounts(db) == [(1, "ann", 70, "ann@x"), (2, "bob", 80, "bob@x")]
    db.close()
    with rivulet.open(path) as again:  # durable: there after a reopen
        assert accounts(again) == [(1, "ann", 70, "ann@x"), (2, "bob", 80, "bob@x")]
        assert again.query("SELECT account, amount FROM moves ORDER BY id") == [(1, -30), (2, 30)]
        assert again.query("SELECT account, body FROM notes") == [(1, "transfer")]


def test_a_transaction_that_wrote_nothing_stores_nothing(db: rivulet.Database) -> None:
    lsn = db.lsn
    with db.transaction() as tx:
        tx.execute("UPDATE accounts SET balance = 1 WHERE id = 99")
        tx.execute("INSERT INTO notes VALUES (7, 'gone')")
        tx.execute("DELETE FROM notes WHERE account = 7")
        assert not tx.written
    assert db.lsn == lsn


# ......................................................................... isolation


def test_own_writes_are_seen_inside_and_by_nobody_else_until_commit(
        db: rivulet.Database) -> None:
    tx = db.transaction()
    tx.execute("UPDATE accounts SET balance = balance - 30 WHERE id = 1")
    tx.execute("INSERT INTO accounts VALUES (3, 'ann', 5, NULL)")
    tx.execute("INSERT INTO moves (account, amount) VALUES (1, -30)")
    # Inside: base-table reads, ad-hoc queries and views with parameters, joins, aggregates.
    assert tx.query("SELECT id, balance FROM accounts ORDER BY id") == [(1, 70), (2, 50), (3, 5)]
    assert tx.query("SELECT balance FROM accounts WHERE id = ?", [1]) == [(70,)]
    assert tx.view("balance").lookup(3) == [(3, "ann", 5)]
    assert tx.view("total").lookup() == [(125, 3)]
    assert tx.view("history").lookup(1) == [("ann", -30)]
    assert sorted(tx.view("per_owner").lookup()) == [("ann", 2), ("bob", 1)]
    assert tx.execute("SELECT COUNT(*) FROM moves") == [(1,)]
    # Outside: as committed.
    db.settle()
    assert db.query("SELECT id, balance FROM accounts ORDER BY id") == [(1, 100), (2, 50)]
    assert db.view("balance").lookup(3) == []
    assert db.view("total").lookup() == [(150, 2)]
    assert db.view("history").lookup(1) == []
    with db.transaction() as other:  # another transaction does not see them either
        assert other.view("total").lookup() == [(150, 2)]
    tx.commit()
    db.wait_for(tx.lsn)
    assert db.view("total").lookup() == [(125, 3)]
    assert db.view("history").lookup(1) == [("ann", -30)]


def test_reads_see_commits_made_since_the_transaction_began(db: rivulet.Database) -> None:
    """READ COMMITTED: each statement sees what is committed when it runs."""
    with db.transaction() as tx:
        tx.execute("INSERT INTO notes VALUES (1, 'mine')")
        db.execute("UPDATE accounts SET balance = 7 WHERE id = 2")
        db.execute("INSERT INTO notes VALUES (2, 'theirs')")
        assert sorted(tx.query("SELECT account, body FROM notes")) == [
            (1, "mine"), (2, "theirs")]
        assert tx.execute("UPDATE accounts SET balance = balance + 1 WHERE id = 2") == 1
        assert tx.query("SELECT balance FROM accounts WHERE id = 2") == [(8,)]
    assert accounts(db)[1] == (2, "bob", 8, "bob@x")


def unlocked(db: rivulet.Database, sql: str) -> None:
    """Commit a write without waiting for the locks of transactions (an autocommit write
    already on its way to the group commit when a transaction locked its row): what the
    check of every row at COMMIT is there for."""
    request = db.write_request(sql)
    assert request is not None
    db.submit_many([request])
    request.wait()


def test_an_autocommit_write_to_a_row_a_transaction_wrote_waits_for_it(
        db: rivulet.Database) -> None:
    """As in InnoDB: the transaction's write holds the row's lock until COMMIT; the
    autocommit write then applies to the committed row (no update lost, nothing failed)."""
    tx = db.transaction()
    tx.execute("UPDATE accounts SET balance = balance + 1 WHERE id = 1")
    other = threading.Thread(target=db.execute,
                             args=("UPDATE accounts SET balance = balance + 10 WHERE id = 1",))
    other.start()
    other.join(0.3)
    assert other.is_alive()  # waiting for the row
    db.execute("UPDATE accounts SET balance = balance + 1000 WHERE id = 2")  # another row
    tx.commit()
    other.join(10)
    assert not other.is_alive()
    assert [r[2] for r in accounts(db)] == [111, 1050]


def test_an_update_lost_to_another_commit_fails_the_commit_and_stores_nothing(
        db: rivulet.Database) -> None:
    tx = db.transaction()
    tx.execute("UPDATE accounts SET balance = balance + 1 WHERE id = 1")
    tx.execute("INSERT INTO moves (account, amount) VALUES (1, 1)")
    unlocked(db, "UPDATE accounts SET balance = balance + 10 WHERE id = 1")  # commits first
    with pytest.raises(WriteConflictError, match=r"\(id\) = \(1\).*try restarting"):
        tx.commit()
    assert accounts(db)[0] == (1, "ann", 110, "ann@x")  # the first committer's, and only it
    assert db.query("SELECT COUNT(*) FROM moves") == [(0,)]
    with pytest.raises(TransactionError, match="ended"):
        tx.execute("SELECT 1 FROM accounts")


def test_a_row_deleted_by_another_commit_fails_the_commit(db: rivulet.Database) -> None:
    tx = db.transaction()
    tx.execute("INSERT INTO notes VALUES (1, 'a'), (1, 'b')")
    tx.commit()
    tx = db.transaction()
    tx.execute("UPDATE notes SET body = 'c' WHERE body = 'a'")  # a table without a key
    unlocked(db, "DELETE FROM notes WHERE body = 'a'")
    with pytest.raises(WriteConflictError, match="table 'notes'"):
        tx.commit()
    assert db.query("SELECT body FROM notes") == [("b",)]


def test_a_key_taken_by_another_commit_meanwhile_fails_the_commit(
        db: rivulet.Database) -> None:
    tx = db.transaction()
    tx.execute("INSERT INTO accounts VALUES (3, 'cy', 0, 'cy@x')")
    tx.execute("INSERT INTO notes VALUES (3, 'opened')")
    unlocked(db, "INSERT INTO accounts VALUES (3, 'dee', 0, NULL)")
    with pytest.raises(ConstraintError, match=r"duplicate primary key \(id\) = \(3\)"):
        tx.commit()
    assert accounts(db)[2] == (3, "dee", 0, None)
    assert db.query("SELECT COUNT(*) FROM notes") == [(0,)]


def test_commits_of_other_rows_meanwhile_are_no_conflict(db: rivulet.Database) -> None:
    with db.transaction() as tx:
        tx.execute("UPDATE accounts SET balance = 0 WHERE id = 1")
        db.execute("UPDATE accounts SET balance = 1 WHERE id = 2")
        db.execute("INSERT INTO accounts VALUES (3, 'cy', 2, NULL)")
    assert [row[2] for row in accounts(db)] == [0, 1, 2]


# ......................................................................... statements


def test_a_failed_statement_undoes_itself_only(db: rivulet.Database) -> None:
    with db.transaction() as tx:
        tx.execute("INSERT INTO accounts VALUES (3, 'cy', 1, NULL)")
        with pytest.raises(ConstraintError, match=r"duplicate primary key \(id\) = \(1\)"):
            tx.execute("INSERT INTO accounts VALUES (4, 'dee', 1, NULL), (1, 'x', 1, NULL)")
        with pytest.raises(ConstraintError, match="UNIQUE key \\(email\\) = \\('bob@x'\\)"):
            tx.execute("UPDATE accounts SET email = 'bob@x' WHERE id = 3")
        with pytest.raises(NotNullError):
            tx.execute("UPDATE accounts SET owner = NULL WHERE id >= 2")
        with pytest.raises(ConstraintError, match="duplicate primary key"):
            tx.execute("UPDATE accounts SET id = 2 WHERE id = 3")
        assert tx.query("SELECT id, owner FROM accounts ORDER BY id") == [
            (1, "ann"), (2, "bob"), (3, "cy")]
    assert [row[:2] for row in accounts(db)] == [(1, "ann"), (2, "bob"), (3, "cy")]


def test_keys_are_checked_against_the_transactions_own_rows(db: rivulet.Database) -> None:
    with db.transaction() as tx:
        tx.execute("DELETE FROM accounts WHERE id = 2")
        tx.execute("INSERT INTO accounts VALUES (2, 'bea', 9, 'bob@x')")  # free again
        with pytest.raises(ConstraintError, match=r"\(id\) = \(2\)"):
            tx.execute("INSERT INTO accounts VALUES (2, 'twice', 9, NULL)")
        tx.execute("UPDATE accounts SET id = id + 10")  # keys that clash only midway
        assert tx.query("SELECT id FROM accounts ORDER BY id") == [(11,), (12,)]
        tx.execute("UPDATE accounts SET email = NULL")  # NULLs never clash
    assert accounts(db) == [(11, "ann", 100, None), (12, "bea", 9, None)]


def test_auto_increment_numbers_are_given_when_the_insert_runs(db: rivulet.Database) -> None:
    tx = db.transaction()
    tx.execute("INSERT INTO moves (account, amount) VALUES (1, 5), (1, 6)")
    assert tx.last_insert_id == 1
    db.execute("INSERT INTO moves (account, amount) VALUES (2, 7)")  # not a conflict
    assert db.last_insert_id == 3
    assert tx.query("SELECT id, amount FROM moves ORDER BY id") == [(1, 5), (2, 6), (3, 7)]
    tx.commit()
    db.settle()
    assert db.query("SELECT id, amount FROM moves ORDER BY id") == [(1, 5), (2, 6), (3, 7)]


def test_ddl_commits_the_open_transaction_first(db: rivulet.Database) -> None:
    tx = db.transaction()
    tx.execute("INSERT INTO notes VALUES (1, 'before')")
    tx.execute("CREATE TABLE later (id INT PRIMARY KEY)")
    tx.execute("INSERT INTO later VALUES (1)")
    tx.rollback()  # only what came after the DDL
    db.settle()
    assert db.query("SELECT body FROM notes") == [("before",)]
    assert db.query("SELECT COUNT(*) FROM later") == [(0,)]


def test_transaction_statements_outside_a_transaction_are_mysqls_autocommit_ones(
        db: rivulet.Database) -> None:
    with pytest.raises(rivulet.UnsupportedSqlError, match=r"db\.transaction\(\)"):
        db.execute("BEGIN")
    assert db.execute("COMMIT") == db.execute("ROLLBACK") == db.execute("SAVEPOINT a") == 0
    with pytest.raises(NoSuchSavepointError, match="SAVEPOINT a does not exist"):
        db.execute("ROLLBACK TO SAVEPOINT a")
    with pytest.raises(rivulet.UnsupportedSqlError, match="READ COMMITTED only"):
        db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
    with db.transaction() as tx:
        with pytest.raises(TransactionError, match="in progress"):
            tx.execute("SET TRANSACTION READ ONLY")
        with pytest.raises(rivulet.UnsupportedSqlError, match="BEGIN inside a transaction"):
            tx.execute("BEGIN")


def test_a_read_only_transaction_refuses_writes(db: rivulet.Database) -> None:
    with db.transaction(read_only=True) as tx:
        assert tx.view("balance").lookup(1) == [(1, "ann", 100)]
        with pytest.raises(ReadOnlyWriteError):
            tx.execute("DELETE FROM notes")


def test_a_table_altered_after_the_transaction_wrote_it_fails_the_commit(
        db: rivulet.Database) -> None:
    tx = db.transaction()
    tx.execute("INSERT INTO notes VALUES (1, 'x')")
    db.execute("ALTER TABLE notes ADD COLUMN extra INT")
    with pytest.raises(ProgramError, match="altered"):
        tx.commit()
    assert db.query("SELECT COUNT(*) FROM notes") == [(0,)]


# ......................................................................... savepoints


def test_savepoints_as_mysql_has_them(db: rivulet.Database) -> None:
    with db.transaction() as tx:
        tx.execute("UPDATE accounts SET balance = 1 WHERE id = 1")
        tx.savepoint("a")
        tx.execute("UPDATE accounts SET balance = 2 WHERE id = 1")
        tx.execute("SAVEPOINT b")
        tx.execute("INSERT INTO accounts VALUES (3, 'cy', 3, NULL)")
        tx.execute("ROLLBACK TO A")  # names are case-insensitive; A stays, b goes
        assert tx.query("SELECT id, balance FROM accounts ORDER BY id") == [(1, 1), (2, 50)]
        with pytest.raises(NoSuchSavepointError, match="SAVEPOINT b does not exist"):
            tx.rollback_to("b")
        tx.execute("INSERT INTO accounts VALUES (4, 'dee', 4, NULL)")
        tx.rollback_to("a")  # again
        tx.execute("UPDATE accounts SET balance = 5 WHERE id = 2")
        tx.savepoint("c")
        tx.execute("RELEASE SAVEPOINT a")  # and every later one
        with pytest.raises(NoSuchSavepointError):
            tx.rollback_to("c")
    assert [(r[0], r[2]) for r in accounts(db)] == [(1, 1), (2, 5)]


#: Views of every shape, each with reads (parameters) to make of it.
SHAPES = {
    "ranged": ("SELECT id, v FROM t WHERE v > ? AND v <= ? ORDER BY id", [(3, 9), (0, 100)]),
    "listed": ("SELECT id FROM t WHERE g IN (?) ORDER BY id", [(1,), (1, 2, 3), ()]),
    "top": ("SELECT id, v FROM t WHERE g = ? ORDER BY v DESC, id LIMIT 3", [(2,), (9,)]),
    "counted": ("SELECT COUNT(*), SUM(v) FROM t WHERE g = ?", [(1,), (42,)]),
    "grouped": ("SELECT g, COUNT(*) FROM t GROUP BY g", [()]),
    "kinds": ("SELECT DISTINCT s FROM t WHERE g IN (?)", [(1, 2), (4,)]),
    "texts": ("SELECT id FROM t WHERE s = ?", [("s1",), (1,), ("S1 ",)]),
    "joined": ("SELECT a.id, b.id FROM t a LEFT JOIN t b ON b.id = a.v WHERE a.g = ?", [(3,)]),
}


def test_reads_computed_in_a_transaction_answer_as_the_views_do(path: Path) -> None:
    """A transaction whose writes leave every row as it was computes its reads (it wrote
    the table) and must answer exactly as the shared views: order, LIMIT, IN lists, ranges,
    implicit groups' default rows, MySQL's comparisons of a string with a number."""
    with rivulet.open(path) as db:
        db.execute("CREATE TABLE t (id INT PRIMARY KEY, g INT, v INT, s VARCHAR(10))")
        db.table("t").insert_many([(i, i % 5, i * 7 % 13, f"s{i % 3}") for i in range(60)])
        for name, (sql, _) in SHAPES.items():
            db.execute(f"CREATE VIEW {name} AS {sql}")
        db.settle()
        with db.transaction() as tx:
            tx.execute("DELETE FROM t WHERE id = 59")
            tx.execute("INSERT INTO t VALUES (59, 4, 10, 's2')")  # as it was
            assert "t" in tx.written_tables()
            for name, (sql, cases) in SHAPES.items():
                for params in cases:
                    try:
                        mine = tx.view(name).lookup(*params)
                    except rivulet.RivuletError as exc:
                        with pytest.raises(type(exc)):
                            db.view(name).lookup(*params)
                        continue
                    theirs = db.view(name).lookup(*params)
                    if "ORDER BY" not in sql:
                        mine, theirs = sorted(mine, key=repr), sorted(theirs, key=repr)
                    assert mine == theirs, (name, params)


# ......................................................................... over HTTP


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_an_http_transaction_commits_all_its_statements_or_none(db: rivulet.Database) -> None:
    client = TestClient(make_app(db))
    move = "UPDATE accounts SET balance = balance + ? WHERE id = ?"
    answer = client.post("/transaction", json={"statements": [
        {"sql": move, "params": [-30, 1]}, {"sql": move, "params": [30, 2]},
        {"sql": "SELECT SUM(balance) AS money, COUNT(*) AS n FROM accounts WHERE owner = ?",
         "params": ["bob"]},
        "INSERT INTO moves (account, amount) VALUES (1, -30)"]})
    assert answer.status_code == 200, answer.text
    body = answer.json()  # (a SUM of integers is a DECIMAL, sent as a string)
    assert body["results"] == [{"rowcount": 1}, {"rowcount": 1},
                               {"columns": ["money", "n"], "rows": [["80", 1]]},
                               {"rowcount": 1}]
    db.wait_for(body["lsn"])
    assert db.view("history").lookup(1) == [("ann", -30)]
    failed = client.post("/transaction", json=[
        {"sql": move, "params": [-5, 1]}, "INSERT INTO accounts VALUES (2, 'x', 1, NULL)"])
    assert failed.status_code == 409 and failed.json()["kind"] == "constraint"
    assert failed.json()["error"].startswith("statement 2: duplicate primary key")
    refused = client.post("/transaction", json=["CREATE TABLE x (id INT PRIMARY KEY)"])
    assert refused.status_code == 400 and "DDL" in refused.json()["error"]
    refused = client.post("/transaction", json=["BEGIN", move])
    assert refused.status_code == 400
    assert [(r[0], r[2]) for r in accounts(db)] == [(1, 70), (2, 80)]
    assert "x" not in db.catalog.tables


# ......................................................................... against SQLite


@pytest.mark.parametrize("seed", range(6))
def test_random_transactions_read_and_commit_what_sqlite_does(path: Path, seed: int) -> None:
    """Random writes, savepoints and rollbacks in transactions: every read inside, and the
    committed rows after, equal SQLite's running the same statements (integers only, where
    the two agree)."""
    rng = random.Random(seed)
    lite = sqlite3.connect(":memory:", isolation_level=None)
    schema = ("CREATE TABLE t (id INT PRIMARY KEY, g INT, v INT)",
              "CREATE TABLE u (g INT, w INT)")
    with rivulet.open(path) as db:
        for sql in schema:
            db.execute(sql)
            lite.execute(sql)
        reads = ["SELECT g, COUNT(*), SUM(v) FROM t GROUP BY g",
                 "SELECT t.id, u.w FROM t JOIN u ON t.g = u.g WHERE t.v > 3",
                 "SELECT id, v FROM t WHERE g = 1", "SELECT g, w FROM u"]
        for _ in range(8):
            tx = db.transaction()
            lite.execute("BEGIN")
            saved = False
            for _ in range(rng.randint(1, 12)):
                k, g, v = rng.randint(0, 12), rng.randint(0, 3), rng.randint(0, 9)
                sql = rng.choice([
                    f"INSERT INTO t VALUES ({k}, {g}, {v})",
                    f"INSERT INTO u VALUES ({g}, {v})",
                    f"UPDATE t SET v = v + {v} WHERE g = {g}",
                    f"UPDATE t SET id = id + 20 WHERE id = {k}",
                    f"DELETE FROM t WHERE id = {k}",
                    f"DELETE FROM u WHERE w = {v}",
                    "SAVEPOINT s", "ROLLBACK TO SAVEPOINT s"])
                if sql.startswith("ROLLBACK") and not saved:
                    continue
                saved = saved or sql.startswith("SAVEPOINT")
                failed = [False, False]
                try:
                    tx.execute(sql)
                except rivulet.RivuletError:
                    failed[0] = True
                try:
                    lite.execute(sql)
                except sqlite3.IntegrityError:
                    failed[1] = True
                assert failed[0] == failed[1], sql
                for read in reads:
                    assert sorted(tx.query(read)) == sorted(lite.execute(read).fetchall()), read
            if rng.random() < 0.3:
                tx.rollback()
                lite.execute("ROLLBACK")
            else:
                tx.commit()
                lite.execute("COMMIT")
            db.settle()
            for read in reads:
                assert sorted(db.query(read)) == sorted(lite.execute(read).fetchall()), read


@pytest.mark.parametrize("converting", [False, True])
def test_rows_a_commit_stores_over_their_own_keys_are_found_by_every_key(
        path: Path, converting: bool) -> None:
    """A row a transaction changed under its own primary key is stored over itself (in
    place, for a table with no other UNIQUE key; deleted and inserted while a column's
    type change is still converting rows): afterwards it is found by its key (a DECIMAL,
    stored as text), by a secondary index and by a scan, as SQLite finds the rows of the
    same statements; and a row changed meanwhile by another commit still fails the
    commit."""
    lite = sqlite3.connect(":memory:", isolation_level=None)
    setup = ["CREATE TABLE p (k DECIMAL(8,2) PRIMARY KEY, g INT, v INT)",
             "CREATE INDEX pg ON p (g)",
             "INSERT INTO p VALUES (1.5, 1, 10), (2.25, 1, 20), (3, 2, 30), (4.75, 2, 40)"]
    statements = ["UPDATE p SET v = v + 1 WHERE k = 1.5",
                  "UPDATE p SET g = 2 WHERE k = 2.25",
                  "UPDATE p SET v = v * 2, g = 3 WHERE k = 3.00",
                  "DELETE FROM p WHERE k = 4.75",
                  "INSERT INTO p VALUES (5.5, 3, 50)"]
    reads = ["SELECT k, g, v FROM p", "SELECT k, v FROM p WHERE g = 2",
             "SELECT k, v FROM p WHERE g = 3", "SELECT g, v FROM p WHERE k = 2.25"]
    # (no background conversion: the rows stay unconverted until the transaction commits)
    with rivulet.open(path, background_migration=not converting) as db:
        for sql in setup:
            db.execute(sql)
            lite.execute(sql)
        if converting:  # (a type change of v: rows converted later, one by one)
            db.execute("ALTER TABLE p MODIFY v DOUBLE")
            assert db.catalog.tables["p"].columns[2].conversion is not None
        with db.transaction() as tx:
            for sql in statements:
                tx.execute(sql)
                lite.execute(sql)
        db.settle()
        for read in reads:
            assert sorted(tuple(float(x) for x in row) for row in db.query(read)) == sorted(
                tuple(float(x) for x in row) for row in lite.execute(read).fetchall()), read
        tx = db.transaction()
        tx.execute("UPDATE p SET v = 0 WHERE k = 1.5")
        unlocked(db, "UPDATE p SET v = 7 WHERE k = 1.50")
        with pytest.raises(WriteConflictError, match="table 'p'"):
            tx.commit()
        assert db.query("SELECT v FROM p WHERE k = 1.5") == [(7,)]
