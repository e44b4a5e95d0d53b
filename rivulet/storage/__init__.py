"""Durable base tables and the write log (SQLite), and write requests.

* :mod:`.base` is the storage interface; :mod:`.writes` the write requests;
* :mod:`.sqlite` is the storage on SQLite (``SqliteStorage``), with the rows' encoding in
  :mod:`.sqlite_rows` and the tracking tables of lazy copies in :mod:`.sqlite_copies`;
* :mod:`.dirlock` is the one-writer lock of a data directory; :mod:`.backup` copies a data
  directory at one commit while it serves, and restores such a copy, checked.
"""
