"""Django's transactions against rivulet over the MySQL protocol, with the real Django ORM
(its MySQL backend, PyMySQL as the driver: tests/django_rivulet.py) and tables made by
Django's schema editor: ``atomic`` that raises leaves nothing, an IntegrityError inside
``atomic`` undoes the block's earlier writes, nested ``atomic`` (savepoints) undoes only
the inner block, ``select_for_update`` read-modify-writes from two threads lose no
increment, and ``get_or_create`` / ``update_or_create`` work inside ``atomic``
(docs/transactions.md)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import django_rivulet
import rivulet
from rivulet.server.mysql.server import ServerThread
from threads import run_threads

django_rivulet.configure()

from django.db import IntegrityError, connection, connections, models, transaction  # noqa: E402


class Item(models.Model):
    id = models.IntegerField(primary_key=True)
    label = models.CharField(max_length=40)

    class Meta:
        app_label = django_rivulet.APP


class Counter(models.Model):  # an AUTO_INCREMENT key, and a UNIQUE name
    name = models.CharField(max_length=40, unique=True)
    n = models.IntegerField(default=0)

    class Meta:
        app_label = django_rivulet.APP


class Boom(Exception):
    pass


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[rivulet.Database]:
    database = rivulet.open(Path(tmp_path_factory.mktemp("django")) / "db")
    server = ServerThread(database, port=0)
    django_rivulet.point_at(server.port)
    django_rivulet.create_models(Item, Counter)
    yield database
    connections.close_all()
    server.stop()
    database.close()


@pytest.fixture
def orm(db: rivulet.Database) -> Iterator[rivulet.Database]:
    """Empty tables before each test."""
    Item.objects.all().delete()
    Counter.objects.all().delete()
    yield db
    assert connection.get_autocommit() and not connection.in_atomic_block


def labels() -> list[tuple[int, str]]:
    return list(Item.objects.order_by("id").values_list("id", "label"))


def test_an_atomic_block_that_raises_leaves_nothing(orm: rivulet.Database) -> None:
    Item.objects.create(id=1, label="before")
    with pytest.raises(Boom), transaction.atomic():
        Item.objects.create(id=2, label="inside")
        Item.objects.filter(id=1).update(label="changed")
        Counter.objects.create(name="c", n=5)
        assert labels() == [(1, "changed"), (2, "inside")]  # read its own writes
        raise Boom
    assert labels() == [(1, "before")]
    assert not Counter.objects.exists()
    with transaction.atomic():  # set_rollback: the block ends normally, yet rolls back
        Item.objects.create(id=3, label="flagged")
        transaction.set_rollback(True)
    assert labels() == [(1, "before")]


def test_an_integrity_error_inside_atomic_undoes_the_blocks_earlier_writes(
        orm: rivulet.Database) -> None:
    Item.objects.create(id=10, label="there")
    with pytest.raises(IntegrityError) as error, transaction.atomic():
        Item.objects.create(id=1, label="a")
        Item.objects.create(id=2, label="b")
        Item.objects.filter(id=10).update(label="touched")
        Item.objects.create(id=10, label="again")  # duplicate primary key
    assert error.value.args[0] == 1062
    assert labels() == [(10, "there")]
    with pytest.raises(IntegrityError), transaction.atomic():  # the UNIQUE name
        Counter.objects.create(name="x")
        Counter.objects.create(name="x")
    assert not Counter.objects.exists()


def test_nested_atomic_rolls_back_only_the_inner_block(orm: rivulet.Database) -> None:
    with transaction.atomic():
        Item.objects.create(id=1, label="outer")
        with pytest.raises(Boom), transaction.atomic():  # SAVEPOINT ... ROLLBACK TO
            Item.objects.create(id=2, label="inner")
            Item.objects.filter(id=1).update(label="inner touched it")
            raise Boom
        assert labels() == [(1, "outer")]
        with transaction.atomic():  # a released savepoint keeps its writes
            Item.objects.create(id=3, label="inner, kept")
            with pytest.raises(Boom), transaction.atomic():  # two levels down
                Item.objects.create(id=4, label="deepest")
                raise Boom
        try:  # the usual pattern: try an insert, carry on after a duplicate
            with transaction.atomic():
                Item.objects.create(id=5, label="dup 1")
                Item.objects.create(id=1, label="dup 2")
        except IntegrityError:
            pass
        Item.objects.create(id=6, label="outer, after")
    assert labels() == [(1, "outer"), (3, "inner, kept"), (6, "outer, after")]


def test_an_outer_block_that_raises_takes_the_released_savepoints_with_it(
        orm: rivulet.Database) -> None:
    with pytest.raises(Boom), transaction.atomic():
        Item.objects.create(id=1, label="outer")
        with transaction.atomic():
            Item.objects.create(id=2, label="inner")
        raise Boom
    assert labels() == []


def test_saving_an_unchanged_row_updates_it(orm: rivulet.Database) -> None:
    """Django's ``save()`` of a row with a primary key UPDATEs it, and takes a count of 0
    for "no such row" and INSERTs it: the count must be the rows matched
    (CLIENT_FOUND_ROWS), not only those changed, or an unchanged row is a duplicate key."""
    item = Item.objects.create(id=1, label="same")
    with transaction.atomic():
        item.save()
        Item(id=1, label="same").save()
        item.save(update_fields=["label"])
    item.save()
    assert labels() == [(1, "same")]


def close_connection() -> None:
    """Close the calling thread's own connection (``connection`` stands for the one of the
    thread that uses it: ``connection.close`` taken on another thread is that thread's)."""
    connection.close()


@pytest.mark.parametrize("by", ["pk", "name"])
def test_select_for_update_from_two_threads_loses_no_increment(orm: rivulet.Database,
                                                                by: str) -> None:
    """By primary key the read locks the row; by the UNIQUE name, the table."""
    counter = Counter.objects.create(name="hits", n=0)
    lookup = {"pk": counter.pk} if by == "pk" else {"name": "hits"}
    times = 25

    def increment(_: int) -> None:
        for _ in range(times):
            with transaction.atomic():
                row = Counter.objects.select_for_update().get(**lookup)
                row.n += 1
                row.save(update_fields=["n"])

    run_threads(2, increment, finish=close_connection)
    orm.settle()
    assert Counter.objects.get(pk=counter.pk).n == 2 * times


def test_get_or_create_and_update_or_create_inside_atomic(orm: rivulet.Database) -> None:
    with transaction.atomic():
        made, created = Counter.objects.get_or_create(name="a", defaults={"n": 1})
        assert created and made.n == 1
        found, created = Counter.objects.get_or_create(name="a", defaults={"n": 99})
        assert not created and found.pk == made.pk and found.n == 1
        updated, created = Counter.objects.update_or_create(name="a", defaults={"n": 2})
        assert not created and updated.pk == made.pk
        fresh, created = Counter.objects.update_or_create(name="b", defaults={"n": 3})
        assert created
    assert list(Counter.objects.order_by("name").values_list("name", "n")) == [
        ("a", 2), ("b", 3)]
    with pytest.raises(Boom), transaction.atomic():  # all of them undone together
        Counter.objects.get_or_create(name="c")
        Counter.objects.update_or_create(name="a", defaults={"n": 100})
        raise Boom
    assert list(Counter.objects.order_by("name").values_list("name", "n")) == [
        ("a", 2), ("b", 3)]


def test_update_or_create_from_two_threads_makes_one_row(orm: rivulet.Database) -> None:
    """update_or_create reads with ``select_for_update`` by a name no row has yet: that
    read locks the table, so the second thread finds the first one's row and updates it
    (InnoDB's gap lock would do the same)."""
    def upsert(i: int) -> None:
        for k in range(10):
            Counter.objects.update_or_create(name=f"k{k}", defaults={"n": i})

    run_threads(2, upsert, finish=close_connection)
    orm.settle()
    rows = list(Counter.objects.order_by("name").values_list("name", flat=True))
    assert rows == [f"k{k}" for k in range(10)]
