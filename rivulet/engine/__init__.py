"""The engine: the :class:`~rivulet.engine.database.Database` facade and its parts.

A database ties the stages below it together: statements bound by :mod:`rivulet.bind`
are committed to :mod:`rivulet.storage`, propagated through the :mod:`rivulet.dataflow`
graph and read from views (:mod:`rivulet.engine.views`); schema changes run through
:mod:`rivulet.migrate`, full state may be computed on :mod:`rivulet.spark`. Everything
above (the servers, the Spark pipeline, the CLI) uses the database's public methods.
"""
