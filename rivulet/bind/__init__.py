"""Binding: statements checked against the catalog and bound to the IR.

The stage between parsing (:mod:`rivulet.sql`) and running (:mod:`rivulet.engine`):
everything that can be wrong with a statement (unknown names, unsupported constructs,
parameter counts) is found here, before anything changes.
"""
