"""SQLite's sqllogictest corpus run through rivulet's Python API, and through SQLite.

Each script's records run on rivulet as the engine ``mysql`` (so ``onlyif mysql`` /
``skipif mysql`` lines pick MySQL's variant of a query) and on the standard library's
SQLite as the engine ``sqlite``, whose answers the scripts hold. Each record gets a verdict
(:mod:`bench.sqllogictest.runner`): a wrong answer or an internal error is a bug; a
refusal (a ``RivuletError`` naming what rivulet does not support) is allowed and counted,
by construct, which says what SQL to support next.

``python -m bench.sqllogictest`` runs the selection and writes
``bench/results/sqllogictest.json``; ``tests/test_sqllogictest.py`` runs it in the suite.
"""
