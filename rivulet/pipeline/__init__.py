"""What drives the engine from Spark: bulk import, verify, the streaming pipeline, commands.

These sit above :mod:`rivulet.engine` (they open a database, read its views, or subclass
it); what the engine itself calls on Spark (session, snapshot, compile, bootstrap) sits
below it, in :mod:`rivulet.spark`. Importing this package costs nothing: pyspark loads
when a module below is first used.

Bulk import is :mod:`.importer` (the entry points and the run), :mod:`.import_spark` (reading
and parsing on Spark), :mod:`.import_rows` (checking the staged rows in Python) and
:mod:`.import_report` (the result, rejected rows, progress); :mod:`.verify` recomputes views
on Spark; :mod:`.streaming` maintains them with Structured Streaming; :mod:`.commands` are
the CLI's commands that use them.
"""
