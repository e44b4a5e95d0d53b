"""Bank transfers over MySQL under ``rivulet serve``, killed with SIGKILL mid-run
(docs/transactions.md).

Eight connections (PyMySQL, autocommit off) move money between ten accounts: each
transfer locks its two accounts with ``SELECT ... FOR UPDATE`` (one after the other, in
random order, so deadlocks happen and are retried), refuses to overdraw, moves the money
and logs the transfer under an id of its own, then commits, or rolls back one time in
five. Meanwhile another connection reads the total again and again: it never changes (a
transaction reaches the views as one delta). Then the server is killed; after a restart
every acknowledged transfer is stored, the only others are those whose COMMIT was in
flight, each balance is the initial one plus the stored transfers, and the total is the
same.
"""

from __future__ import annotations

import random
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pymysql

from test_server_serve import start, stop

ACCOUNTS = 10
INITIAL = 1000
CLIENTS = 8
RUN_SECONDS = 3.0


def connect(port: int, **kwargs: Any) -> pymysql.Connection:
    return pymysql.connect(host="127.0.0.1", port=port, user="root", database="rivulet",
                           **kwargs)


class Client:
    """One connection's transfers: those acknowledged, and the one whose COMMIT was sent
    when the server died (if any)."""

    def __init__(self, port: int, index: int) -> None:
        self.port, self.index = port, index
        self.acked: list[tuple[int, int, int, int]] = []
        self.in_flight: tuple[int, int, int, int] | None = None
        self.deadlocks = self.rollbacks = 0
        self.error: BaseException | None = None

    def run(self, stop_at: threading.Event) -> None:
        rng = random.Random(self.index)
        try:
            conn = connect(self.port)
        except pymysql.err.OperationalError:
            return
        cursor = conn.cursor()
        n = 0
        try:
            while not stop_at.is_set():
                n += 1
                token = self.index * 1_000_000 + n
                src, dst = rng.sample(range(ACCOUNTS), 2)
                amount = rng.randint(1, 80)
                try:
                    cursor.execute("SELECT balance FROM accounts WHERE id = %s FOR UPDATE",
                                   (src,))
                    (balance,) = cursor.fetchone()
                    cursor.execute("SELECT balance FROM accounts WHERE id = %s FOR UPDATE",
                                   (dst,))
                    if balance < amount:
                        conn.rollback()
                        continue
                    cursor.execute("UPDATE accounts SET balance = balance - %s WHERE id = %s",
                                   (amount, src))
                    cursor.execute("UPDATE accounts SET balance = balance + %s WHERE id = %s",
                                   (amount, dst))
                    cursor.execute("INSERT INTO transfers VALUES (%s, %s, %s, %s)",
                                   (token, src, dst, amount))
                    if rng.random() < 0.2:
                        conn.rollback()
                        self.rollbacks += 1
                        continue
                    self.in_flight = (token, src, dst, amount)
                    conn.commit()
                    self.acked.append(self.in_flight)
                    self.in_flight = None
                except pymysql.err.OperationalError as exc:
                    if exc.args[0] != 1213:
                        raise
                    self.deadlocks += 1  # rolled back: try another
        except (pymysql.err.OperationalError, pymysql.err.InterfaceError, OSError):
            return  # the server died
        except BaseException as exc:  # reported by the test
            self.error = exc


def test_transfers_keep_the_total_through_rollbacks_deadlocks_and_a_sigkill(
        tmp_path: Path) -> None:
    proc, port, lines = start(tmp_path, "--no-demo", "--no-http")
    try:
        setup = connect(port, autocommit=True)
        with setup.cursor() as cursor:
            cursor.execute("CREATE TABLE accounts (id INT PRIMARY KEY, balance INT NOT NULL)")
            cursor.execute("CREATE TABLE transfers (id INT PRIMARY KEY, src INT NOT NULL, "
                           "dst INT NOT NULL, amount INT NOT NULL)")
            cursor.execute("INSERT INTO accounts VALUES "
                           + ", ".join(f"({i}, {INITIAL})" for i in range(ACCOUNTS)))
        stop_at = threading.Event()
        clients = [Client(port, k + 1) for k in range(CLIENTS)]
        threads = [threading.Thread(target=c.run, args=(stop_at,)) for c in clients]
        for t in threads:
            t.start()
        totals = set()
        deadline = time.monotonic() + RUN_SECONDS
        with setup.cursor() as cursor:
            while time.monotonic() < deadline:
                cursor.execute("SELECT SUM(balance), COUNT(*) FROM accounts")
                totals.add(tuple(int(v) for v in cursor.fetchone()))
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        stop_at.set()
        for t in threads:
            t.join(30)
    except BaseException:
        proc.kill()
        raise
    assert totals == {(ACCOUNTS * INITIAL, ACCOUNTS)}
    assert not [c.error for c in clients if c.error is not None]
    acked = {t for c in clients for t in c.acked}
    in_flight = {c.in_flight for c in clients if c.in_flight is not None}
    assert len(acked) > 20 and sum(c.rollbacks for c in clients) > 0

    proc, port, lines = start(tmp_path, "--no-demo", "--no-http")
    try:
        conn = connect(port, autocommit=True)
        with conn.cursor() as cursor:
            cursor.execute("SELECT id, src, dst, amount FROM transfers")
            stored = {tuple(r) for r in cursor.fetchall()}
            cursor.execute("SELECT id, balance FROM accounts")
            balances = dict(cursor.fetchall())
            cursor.execute("SELECT SUM(balance) FROM accounts")
            (total,) = cursor.fetchone()
        conn.close()
    finally:
        stop(proc, lines)
    assert acked <= stored, "acknowledged transfers lost"
    assert stored - acked <= in_flight, "transfers nobody committed"
    expected = dict.fromkeys(range(ACCOUNTS), INITIAL)
    for _, src, dst, amount in stored:
        expected[src] -= amount
        expected[dst] += amount
    assert balances == expected  # no transfer half applied
    assert int(total) == ACCOUNTS * INITIAL and min(balances.values()) >= 0
