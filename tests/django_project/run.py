"""Run a Django project against a MySQL server and print what its ORM answered (JSON).

``python tests/django_project/run.py PORT DATABASE USER [rivulet]``: Django's own MySQL
backend (PyMySQL as its driver, tests/django_rivulet.py) runs ``migrate`` for auth,
contenttypes, sessions, admin and the ``blog`` app, then ORM operations across relations;
each answer is printed, to be compared between rivulet and MariaDB by
tests/test_django_project.py. Django's settings are global to a process, hence a process
of its own."""

from __future__ import annotations

import json
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]


def configure(port: int, database: str, user: str, options: dict[str, str]) -> None:
    import django
    from django.conf import settings

    import django_rivulet

    django_rivulet._import_backend_over_pymysql()
    settings.configure(
        DATABASES={"default": {
            "ENGINE": "django.db.backends.mysql", "NAME": database, "USER": user,
            "PASSWORD": "", "HOST": "127.0.0.1", "PORT": str(port),
            "OPTIONS": options,
        }},
        INSTALLED_APPS=["django.contrib.auth", "django.contrib.contenttypes",
                        "django.contrib.sessions", "django.contrib.admin",
                        "django.contrib.messages", "blog"],
        USE_TZ=True, TIME_ZONE="UTC", DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
        MIGRATION_MODULES={"blog": None},  # (no migrations: made by --run-syncdb)
    )
    django.setup()


def plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in sorted(value.items())}
    return value


def refused_or(read: Any) -> Any:
    """What ``read()`` answers, or ``{"refused": message}`` where the server refuses the
    query it sends with 1235 (rivulet's refusal of what it does not compute)."""
    from django.db import NotSupportedError

    try:
        return read()
    except NotSupportedError as exc:
        return {"refused": str(exc.args[1] if len(exc.args) > 1 else exc)}


def scenario() -> dict[str, Any]:
    from blog.models import Author, Post, Tag
    from django.contrib.auth.models import Group, User
    from django.db import IntegrityError, transaction
    from django.db.models import Count, Exists, F, Max, OuterRef, Q, Subquery, Sum

    out: dict[str, Any] = {}
    ann = Author.objects.create(name="ann", karma=3)
    bob = Author.objects.create(name="bob", karma=1)
    Author.objects.create(name="cy")
    # (bulk_create: ids come back from MariaDB's RETURNING, not from MySQL 8, which
    # rivulet says it is; fetched again, they are the same on both)
    Tag.objects.bulk_create([Tag(label=t) for t in ("db", "web", "py")])
    tags = [Tag.objects.get(label=t) for t in ("db", "web", "py")]
    first = Post.objects.create(author=ann, title="hello", votes=5, score=Decimal("1.50"))
    second = Post.objects.create(author=ann, title="again", votes=2, reply_to=first)
    third = Post.objects.create(author=bob, title="hello", votes=7, score=Decimal("2.25"))
    first.tags.add(*tags[:2])
    second.tags.add(tags[0])
    third.tags.add(tags[2], tags[0])
    third.tags.add(tags[0])  # (again: INSERT IGNORE skips it)
    try:
        with transaction.atomic():
            Post.objects.create(author=bob, title="hello")
    except IntegrityError:
        out["unique_together"] = "IntegrityError"
    out["filter_across"] = sorted(Post.objects.filter(author__name="ann")
                                  .values_list("title", flat=True))
    out["by_tag"] = sorted(Post.objects.filter(tags__label="db")
                           .values_list("author__name", "title"))
    out["exclude_q"] = sorted(Post.objects.exclude(Q(votes__lt=3) | Q(author__karma=1))
                              .values_list("title", flat=True))
    out["annotate"] = sorted(Author.objects.annotate(n=Count("posts"))
                             .values_list("name", "n"))
    out["aggregate"] = plain(Post.objects.aggregate(total=Sum("votes"), top=Max("score")))
    Post.objects.filter(pk=first.pk).update(votes=F("votes") + 10)
    out["f_update"] = Post.objects.get(pk=first.pk).votes
    out["select_related"] = sorted((p.title, p.author.name) for p in
                                   Post.objects.select_related("author").all())
    out["prefetch"] = sorted((p.title, sorted(t.label for t in p.tags.all()))
                             for p in Post.objects.prefetch_related("tags"))
    newest = Post.objects.filter(author=OuterRef("pk")).order_by("-votes")
    out["subquery"] = refused_or(lambda: sorted(
        Author.objects.annotate(best=Subquery(newest.values("title")[:1]))
        .values_list("name", "best")))
    # Subquery() annotations that provably return at most one row (rivulet/plan/scalars.py):
    # the first row in an order on a key, a count grouped by the correlated column (NULL
    # where no row: a GROUP BY of no rows has no group), a row by its primary key.
    ranked = Post.objects.filter(author=OuterRef("pk")).order_by("-votes", "-pk")
    out["subquery_first"] = refused_or(lambda: sorted(
        Author.objects.annotate(best=Subquery(ranked.values("title")[:1]))
        .values_list("name", "best")))
    counted = (Post.objects.filter(author=OuterRef("pk")).order_by().values("author")
               .annotate(n=Count("*")).values("n"))
    out["subquery_count"] = refused_or(lambda: sorted(
        Author.objects.annotate(n=Subquery(counted)).values_list("name", "n")))
    out["subquery_by_key"] = refused_or(lambda: sorted(
        Post.objects.annotate(by=Subquery(Author.objects.filter(pk=OuterRef("author_id"))
                                          .values("name"))).values_list("title", "by")))
    out["exists"] = refused_or(lambda: sorted(Author.objects.filter(Exists(
        Post.objects.filter(author=OuterRef("pk")))).values_list("name", flat=True)))
    obj, made = Tag.objects.get_or_create(label="db")
    out["get_or_create"] = [obj.label, made]
    obj, made = Author.objects.update_or_create(name="cy", defaults={"karma": 9})
    out["update_or_create"] = [obj.karma, made]
    out["reply_of"] = Post.objects.get(pk=second.pk).reply_to.title
    first.delete()  # CASCADE of its tags rows; SET NULL of its replies
    out["set_null"] = Post.objects.get(pk=second.pk).reply_to_id
    bob.delete()  # CASCADE of bob's posts and their tags rows
    out["after_cascade"] = sorted(Post.objects.values_list("author__name", "title"))
    out["tag_rows"] = sorted(Post.tags.through.objects.values_list("post__title",
                                                                   "tag__label"))
    user = User.objects.create_user("alice", "a@example.org", "pw")
    user.groups.add(Group.objects.create(name="editors"))
    out["users_in_group"] = list(User.objects.filter(groups__name="editors")
                                 .values_list("username", flat=True))
    with transaction.atomic():
        Author.objects.filter(name="cy").update(karma=F("karma") + 1)
        try:
            with transaction.atomic():
                Author.objects.create(name="dee")
                raise RuntimeError("roll the inner block back")
        except RuntimeError:
            pass
    out["nested_atomic"] = sorted(Author.objects.values_list("name", "karma"))
    out["count"] = [Author.objects.count(), Post.objects.count(), Tag.objects.count()]
    out.update(json_lookups())
    return plain(out)


def json_lookups() -> dict[str, Any]:
    """A JSONField's lookups: Django sends rivulet (MySQL 8 to it) ``JSON_CONTAINS``,
    ``JSON_CONTAINS_PATH``, ``JSON_EXTRACT`` and ``->>``, and MariaDB its own forms
    (``JSON_UNQUOTE(JSON_EXTRACT(...))`` for ``->>``); the answers must agree."""
    from blog.models import Doc
    from django.db.models import Q
    from django.db.models.fields.json import KT

    for name, data in [
            ("obj", {"a": 1, "b": [1, 2], "c": {"d": "x"}}), ("tags", {"a": 2, "tags": ["x", "y"]}),
            ("list", [1, 2, 3]), ("text", "str"), ("number", 5), ("none", None),
            ("nested", {"c": {"d": "X", "e": [{"f": True}]}, "a": None}),
            ("odd", {"é": "\u00e9", "a b": 1.5, "b": [[1, 2], 3]})]:
        Doc.objects.create(name=name, data=data)
    docs = Doc.objects.all()

    def names(query: Any) -> list[str]:
        return sorted(query.values_list("name", flat=True))

    ann = Q(data__contains={"a": 1}) | Q(data__contains=[2])
    return {
        "json_contains": names(docs.filter(data__contains={"a": 1})),
        "json_contains_list": names(docs.filter(data__contains={"b": [1]})),
        "json_contains_or": names(docs.filter(ann)),
        "json_contains_scalar": names(docs.filter(data__contains=5)),
        "json_contained_by": names(docs.filter(data__contained_by={
            "a": 1, "b": [1, 2, 3], "c": {"d": "x"}, "tags": ["x", "y", "z"]})),
        "json_has_key": names(docs.filter(data__has_key="a")),
        "json_has_keys": names(docs.filter(data__has_keys=["a", "b"])),
        "json_has_any_keys": names(docs.filter(data__has_any_keys=["tags", "c"])),
        "json_has_nested_key": names(docs.filter(data__c__has_key="e")),
        "json_key_exact": names(docs.filter(data__a=1)),
        "json_nested_key_exact": names(docs.filter(data__c__d="x")),
        "json_index_exact": names(docs.filter(data__1=2)),
        "json_key_isnull": names(docs.filter(data__a__isnull=True)),
        "json_key_not_isnull": names(docs.filter(data__a__isnull=False)),
        "json_isnull": names(docs.filter(data__isnull=True)),
        "json_exact": names(docs.filter(data={"a": 2, "tags": ["x", "y"]})),
        "json_exact_scalar": names(docs.filter(data="str")),
        "json_key_gt": names(docs.filter(data__a__gt=1)),
        "json_key_in": names(docs.filter(data__a__in=[1, 2])),
        "json_key_contains": names(docs.filter(data__tags__contains=["x"])),
        "json_key_icontains": names(docs.filter(data__c__d__icontains="X")),
        "json_key_startswith": names(docs.filter(data__c__d__startswith="x")),
        "json_values": sorted(docs.values_list("name", "data__a", "data__c__d")),
        "json_kt": sorted(docs.annotate(d=KT("data__c__d")).values_list("name", "d")),
        "json_whole": sorted(docs.values_list("name", "data")),
        "json_order": list(docs.filter(data__has_key="a").order_by("data__a", "name")
                           .values_list("name", flat=True)),
    }


def main() -> None:
    port, database, user = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    # rivulet: the connection reads its own commits, as on MySQL (tests/django_rivulet.py)
    rivulet = sys.argv[4:] == ["rivulet"]
    configure(port, database, user, {"init_command": "SET rivulet_read_your_writes = 1"}
              if rivulet else {})
    from django.core.management import call_command

    call_command("migrate", run_syncdb=True, verbosity=0)
    print(json.dumps(scenario()))


if __name__ == "__main__":
    main()
