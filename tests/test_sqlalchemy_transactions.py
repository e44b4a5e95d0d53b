"""SQLAlchemy 2's ORM sessions against rivulet over the MySQL protocol (the ``mysql+pymysql``
dialect, tables made by ``metadata.create_all``): a failed flush raises the real error and
``rollback()`` leaves none of the session's rows, ``Session.begin()`` commits or rolls back
as a block, ``begin_nested()`` savepoints undo only their part, and ``with_for_update()``
read-modify-writes from two threads lose no increment (docs/transactions.md)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy import exc
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, sessionmaker

import rivulet
from rivulet.server.mysql.server import ServerThread
from threads import run_threads


class Base(DeclarativeBase):
    pass


class Account(Base):
    __tablename__ = "sa_account"
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    owner: Mapped[str] = mapped_column(sa.String(40), nullable=False)
    balance: Mapped[int] = mapped_column(default=0)


class Entry(Base):  # an AUTO_INCREMENT key
    __tablename__ = "sa_entry"
    id: Mapped[int] = mapped_column(primary_key=True)
    note: Mapped[str] = mapped_column(sa.String(40))


class Boom(Exception):
    pass


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[tuple[rivulet.Database, sa.Engine]]:
    db = rivulet.open(Path(tmp_path_factory.mktemp("sqlalchemy")) / "db")
    server = ServerThread(db, port=0)
    engine = sa.create_engine(f"mysql+pymysql://root@127.0.0.1:{server.port}/rivulet",
                              connect_args={"init_command": "SET rivulet_read_your_writes = 1"})
    Base.metadata.create_all(engine)
    yield db, engine
    engine.dispose()
    server.stop()
    db.close()


@pytest.fixture
def make(served: tuple[rivulet.Database, sa.Engine]) -> Iterator[sessionmaker[Session]]:
    """A session factory, over empty tables."""
    db, engine = served
    with engine.begin() as conn:
        conn.execute(sa.delete(Account))
        conn.execute(sa.delete(Entry))
    yield sessionmaker(engine)


def committed(make: sessionmaker[Session], db: rivulet.Database) -> list[tuple]:
    """Every account as stored (every commit settled in the views first)."""
    db.settle()
    with make() as session:
        return [tuple(r) for r in session.execute(
            sa.select(Account.id, Account.owner, Account.balance).order_by(Account.id))]


@pytest.mark.parametrize("failure", ["null", "duplicate"])
def test_a_failed_flush_raises_its_error_and_rollback_leaves_nothing(
        make: sessionmaker[Session], served: tuple[rivulet.Database, sa.Engine],
        failure: str) -> None:
    db = served[0]
    with make.begin() as session:
        session.add(Account(id=1, owner="kept", balance=10))
    session = make()
    session.add_all([Account(id=2, owner="b"), Account(id=3, owner="c")])
    session.add(Entry(note="logged"))
    session.flush()  # several writes, then one that fails
    session.get(Account, 1).balance = 99  # type: ignore[union-attr]
    session.flush()
    if failure == "null":
        session.add(Account(id=4, owner=None))  # type: ignore[arg-type]
        code = 1048
    else:
        session.add(Account(id=2, owner="again"))
        code = 1062
    with pytest.raises(exc.IntegrityError) as error:
        session.flush()
    assert error.value.orig.args[0] == code  # type: ignore[union-attr]
    assert "cannot undo" not in str(error.value)
    session.rollback()
    assert session.scalars(sa.select(Account.id).order_by(Account.id)).all() == [1]
    session.close()
    assert committed(make, db) == [(1, "kept", 10)]
    with make() as session:
        assert session.scalars(sa.select(Entry)).all() == []


def test_session_begin_commits_the_block_or_nothing(
        make: sessionmaker[Session], served: tuple[rivulet.Database, sa.Engine]) -> None:
    db = served[0]
    with make.begin() as session:
        session.add_all([Account(id=1, owner="a", balance=5), Account(id=2, owner="b")])
        session.add(Entry(note="opened"))
    with make.begin() as session:  # a transfer
        a, b = session.get(Account, 1), session.get(Account, 2)
        assert a is not None and b is not None
        a.balance, b.balance = a.balance - 3, b.balance + 3
    with pytest.raises(Boom), make.begin() as session:
        session.get(Account, 1).balance = 0  # type: ignore[union-attr]
        session.add(Account(id=3, owner="c"))
        session.flush()
        raise Boom
    assert committed(make, db) == [(1, "a", 2), (2, "b", 3)]
    with make() as session:
        assert session.scalars(sa.select(Entry.note)).all() == ["opened"]


def test_begin_nested_rolls_back_only_the_savepoint(
        make: sessionmaker[Session], served: tuple[rivulet.Database, sa.Engine]) -> None:
    db = served[0]
    with make.begin() as session:
        session.add(Account(id=1, owner="outer"))
        session.flush()
        nested = session.begin_nested()  # SAVEPOINT
        session.add(Account(id=2, owner="inner"))
        session.get(Account, 1).balance = 7  # type: ignore[union-attr]
        session.flush()
        nested.rollback()  # ROLLBACK TO SAVEPOINT
        assert session.scalars(sa.select(Account.id)).all() == [1]
        with session.begin_nested():  # RELEASE SAVEPOINT: kept
            session.add(Account(id=3, owner="kept"))
        with pytest.raises(exc.IntegrityError):  # a duplicate undoes its savepoint only
            with session.begin_nested():
                session.add(Account(id=4, owner="undone"))
                session.flush()
                session.add(Account(id=1, owner="duplicate"))
                session.flush()
        with pytest.raises(Boom), session.begin_nested():
            session.add(Account(id=5, owner="undone"))
            session.flush()
            raise Boom
        session.add(Account(id=6, owner="outer, after"))
    assert committed(make, db) == [(1, "outer", 0), (3, "kept", 0), (6, "outer, after", 0)]


@pytest.mark.parametrize("by", ["key", "owner"])
def test_with_for_update_from_two_threads_loses_no_increment(
        make: sessionmaker[Session], served: tuple[rivulet.Database, sa.Engine],
        by: str) -> None:
    """Read by primary key, the row is locked; by another column, the table."""
    db = served[0]
    with make.begin() as session:
        session.add_all([Account(id=1, owner="counter"), Account(id=2, owner="other")])
    where = Account.id == 1 if by == "key" else Account.owner == "counter"
    times = 25

    def increment(_: int) -> None:
        for _ in range(times):
            with make.begin() as session:
                row = session.scalars(sa.select(Account).where(where).with_for_update()).one()
                row.balance += 1

    run_threads(2, increment)
    assert committed(make, db) == [(1, "counter", 2 * times), (2, "other", 0)]


def test_transfers_from_two_threads_keep_the_total(
        make: sessionmaker[Session], served: tuple[rivulet.Database, sa.Engine]) -> None:
    """Transfers that lock both accounts (in key order, so no deadlock) with
    ``with_for_update``; every other one rolled back on purpose."""
    db = served[0]
    with make.begin() as session:
        session.add_all([Account(id=i, owner=f"a{i}", balance=100) for i in range(1, 5)])

    def transfer(seed: int) -> None:
        for k in range(20):
            first, second = sorted({1 + (seed + k) % 4, 1 + (seed + 3 * k + 1) % 4})
            if first == second:
                continue
            session = make()
            try:
                rows = session.scalars(sa.select(Account).where(
                    Account.id.in_([first, second])).order_by(Account.id)
                    .with_for_update()).all()
                rows[0].balance -= 7
                rows[1].balance += 7
                session.flush()
                if k % 2:
                    session.rollback()
                else:
                    session.commit()
            finally:
                session.close()

    run_threads(2, transfer)
    balances = [r[2] for r in committed(make, db)]
    assert sum(balances) == 400 and balances != [100] * 4
