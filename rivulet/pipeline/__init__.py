"""What drives the engine from Spark: bulk import, verify, the streaming pipeline, commands.

These sit above :mod:`rivulet.engine` (they open a database, read its views, or subclass
it); what the engine itself calls on Spark (session, snapshot, compile, bootstrap) sits
below it, in :mod:`rivulet.spark`. Importing this package costs nothing: pyspark loads
when a module below is first used.
"""
