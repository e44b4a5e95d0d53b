"""The requirements class ``bench.orm`` runs SQLAlchemy's dialect compliance suite with.

SQLAlchemy's wheel ships the suite (``sqlalchemy.testing.suite``) and its default
requirements (``SuiteRequirements``), but not the per-backend requirements of its own test
tree, so this is the suite's defaults with the features SQLAlchemy's requirements open for
the mysql dialect opened (a subset: what MySQL 8 / MariaDB 10.x both have) and the few
default-open ones MySQL lacks closed. The same class is used for every server measured, so
two servers' results compare test by test: a test one server skips, the other skips too.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.testing import exclusions
from sqlalchemy.testing.requirements import SuiteRequirements

_open = property(lambda self: exclusions.open())
_closed = property(lambda self: exclusions.closed())


class MySQLRequirements(SuiteRequirements):
    """``SuiteRequirements`` as the mysql dialect's own requirements have them."""

    # opened: features MySQL 8 / MariaDB 10.x have
    table_ddl_if_exists = _open
    foreign_keys_reflect_as_index = _open
    unique_constraints_reflect_as_index = _open
    unique_index_reflect_as_unique_constraints = _open
    boolean_col_expressions = _open
    intersect = _open
    except_ = _open
    window_functions = _open
    ctes = _open
    tuple_in = _open
    dbapi_lastrowid = _open
    emulated_lastrowid = _open
    views = _open
    foreign_key_constraint_name_reflection = _open
    comment_reflection = _open
    foreign_key_constraint_option_reflection_ondelete = _open
    foreign_key_constraint_option_reflection_onupdate = _open
    unicode_ddl = _open
    datetime_historic = _open
    date_historic = _open
    autocommit = _open
    isolation_level = _open
    json_type = _open
    server_defaults = _open
    expression_server_defaults = _open
    savepoints = _open
    update_from = _open
    delete_from = _open
    mod_operator_as_percent_sign = _open
    order_by_label_with_expression = _open
    computed_columns = _open
    regexp_match = _open
    regexp_replace = _open
    reflect_table_options = _open
    supports_bitwise_or = _open
    supports_bitwise_and = _open
    supports_bitwise_not = _open
    supports_bitwise_xor = _open
    supports_bitwise_shift = _open

    # closed: default-open suite requirements MySQL does not meet
    unbounded_varchar = _closed  # VARCHAR needs a length
    temp_table_reflection = _closed
    temp_table_reflect_indexes = _closed
    datetime_microseconds = _closed  # DATETIME without an fsp
    time_microseconds = _closed
    timestamp_microseconds = _closed
    sql_expression_limit_offset = _closed  # LIMIT takes literals only
    date_implicit_bound = _closed  # PyMySQL returns date/time literals as strings
    time_implicit_bound = _closed
    datetime_implicit_bound = _closed

    def get_isolation_levels(self, config: Any) -> dict[str, Any]:
        return {
            "default": "REPEATABLE READ",
            "supported": ["SERIALIZABLE", "READ UNCOMMITTED", "READ COMMITTED",
                          "REPEATABLE READ", "AUTOCOMMIT"],
        }
