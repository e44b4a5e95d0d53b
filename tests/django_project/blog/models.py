"""The app of the Django project test (tests/test_django_project.py): a foreign key with
CASCADE, a many-to-many field, ``unique_together``, an index, a self-referencing
foreign key with SET NULL, and a JSONField."""

from django.db import models


class Author(models.Model):
    name = models.CharField(max_length=40, unique=True)
    karma = models.IntegerField(default=0)


class Tag(models.Model):
    label = models.CharField(max_length=20, unique=True)


class Post(models.Model):
    author = models.ForeignKey(Author, on_delete=models.CASCADE, related_name="posts")
    title = models.CharField(max_length=80)
    votes = models.IntegerField(default=0)
    score = models.DecimalField(max_digits=8, decimal_places=2, default=0)
    tags = models.ManyToManyField(Tag, related_name="posts")
    reply_to = models.ForeignKey("self", null=True, on_delete=models.SET_NULL,
                                 related_name="replies")

    class Meta:
        unique_together = [("author", "title")]
        indexes = [models.Index(fields=["votes"], name="post_votes_idx")]


class Doc(models.Model):
    """A JSONField: a ``json`` column on MySQL 8 (rivulet says it is one), a ``longtext``
    checked by ``JSON_VALID`` on MariaDB."""

    name = models.CharField(max_length=20, unique=True)
    data = models.JSONField(null=True)
