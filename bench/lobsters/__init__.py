"""The Lobsters news aggregator's workload (the Noria paper, section 8.1).

* ``schema.sql`` / ``schema_natural.sql`` -- the tables, with and without the columns the
  baseline application maintains by hand;
* :mod:`bench.lobsters.queries` -- each page's statements, baseline and natural;
* :mod:`bench.lobsters.data` -- a seeded, Zipf-skewed data set at production scale;
* :mod:`bench.lobsters.workload` -- page requests in the production mix;
* :mod:`bench.lobsters.backends` -- rivulet embedded, or a DB-API database (SQLite);
* :mod:`bench.lobsters.pages` -- one page view against a backend, as comparable data.
"""
