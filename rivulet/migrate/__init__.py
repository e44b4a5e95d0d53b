"""Schema changes while running: ``ALTER TABLE`` plans, ``CREATE TABLE ... AS`` copies,
and the lazy background work that converts and copies rows (BullFrog's lazy migration).

Each change is planned here at once and costs O(1); rows are converted or copied on
demand and by a background thread (:mod:`rivulet.migrate.lazy`).
"""
