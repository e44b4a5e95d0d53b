"""What the MySQL server does with each statement shape, decided once and cached.

A statement's text is split into a template and slot values (:mod:`.normalize`). The first
time a template is seen it is parsed (sqlglot, ~0.5 ms) into a :class:`Shape`: what kind
of statement it is and which slots sit where a view or a write can take a parameter
(``col = ?``, ``col IN (?, ...)``, ``col BETWEEN ? AND ?``, range comparisons in the outer
``WHERE`` conjuncts; a value of ``INSERT ... VALUES``; the value of a ``SET col = ?``).
Every other literal stays a constant of the statement. A :class:`Handler` then binds
the shape and its constants to the engine: a SELECT to the view that answers it (made on
first use; ``id = 5`` and ``id = 6`` share it), a write to its bound statement. After
that, a query costs one regular-expression pass and two dict lookups before the engine
is called: no SQL parsing on the hot path.

Parameters always reach the engine as values: a prepared statement's ``?`` and a text
query's literals alike. Nothing a client sends is ever spliced into SQL that gets run.
"""

from __future__ import annotations

import decimal
import re
import threading
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from rivulet.bind import statements as st
from rivulet.errors import ParameterCountError, SqlError, UnsupportedSqlError
from rivulet.server.mysql.normalize import Split, with_markers
from rivulet.server.mysql.reply_cache import ENTRY_BYTES, ReplyBudget, reply_cache_bytes
from rivulet.sql.clock import reads_clock
from rivulet.sql.control import control_statement
from rivulet.sql.dual import is_dual
from rivulet.sql.lock_calls import has_lock_call
from rivulet.sql.parens import conjuncts
from rivulet.sql.parse import DIALECT, parse_one
from rivulet.sql.rename import is_rename_table
from rivulet.sql.schemas import DEFAULT_SCHEMA

if TYPE_CHECKING:
    from rivulet.engine.database import Database
    from rivulet.engine.views import View
    from rivulet.plan.ir import ViewPlan
    from rivulet.storage.writes import WriteRequest

#: The one database (schema) a client sees: ``USE rivulet``, ``rivulet.table``.
DATABASE_NAME = DEFAULT_SCHEMA

# Statement kinds.
READ = "read"  # a SELECT answered from a view
WRITE = "write"  # INSERT / UPDATE / DELETE
DDL = "ddl"  # CREATE / DROP / ALTER, through the engine
SHOW = "show"  # SHOW TABLES / VIEWS / CREATE TABLE / CREATE VIEW / COLUMNS, DESCRIBE
EXPLAIN = "explain"  # the dataflow plan of a view or a query
SET = "set"  # SET, rivulet's own variables included
TRANSACTION = "transaction"  # BEGIN, COMMIT, ROLLBACK, SAVEPOINT, ... (rivulet/sql/control.py)
CHATTER = "chatter"  # what drivers send at connect time: handled by mysql-mimic
NAMED_LOCK = "named_lock"  # SELECT GET_LOCK(...): the session's (rivulet/sql/lock_calls.py)
#: A SELECT that calls a time function (NOW(), CURDATE(), ...): answered once, at its
#: statement, by no view (its answer changes with no write: rivulet/sql/clock.py).
CLOCK = "clock"

#: The kinds of statement the protocol answers from their template's parsed tree.
_ANSWERED_FROM_TREE = frozenset({SHOW, EXPLAIN, CHATTER})
_MARKER = "__rv{}__"
_MARKER_RE = re.compile(r"`?__rv(\d+)__`?")
_RENDERED_MARKER = re.compile(r"(-?)`?__rv(\d+)__`?")  # sqlglot writes a unary minus adjacent
_SYSTEM_SCHEMAS = {"information_schema", "mysql", "performance_schema", "sys"}
_SHOW_VIEWS = re.compile(r"\s*SHOW\s+VIEWS\s*;?\s*", re.I)
_COMPARISONS = (exp.EQ, exp.GT, exp.GTE, exp.LT, exp.LTE)

#: Bound on each cache; a full cache is emptied (shapes come back on their next use).
CACHE_LIMIT = 20_000
#: Bound on the count of whole query texts kept (per client character set: see Texts);
#: their bytes count against the server's ReplyBudget.
TEXT_CACHE_LIMIT = 50_000
#: Slots of the table of texts seen once (:class:`Texts`): 512 KiB per client character set.
SEEN_SLOTS = 1 << 16


@dataclass(eq=False)
class Shape:
    """A template, parsed once."""

    kind: str
    node: exp.Expr | None = None  # the parsed template, kept for the kinds answered from it
    rendered: str = ""  # the template as sqlglot renders it, with slot markers
    positions: frozenset[int] = frozenset()  # slots that may be parameters
    negated: frozenset[int] = frozenset()  # ... of them, those written `-5`: the value negated
    #: Set when the view planner rejected the parameterized form (two range columns, say):
    #: the template's literals then stay constants.
    params_ok: bool = True
    #: Set when the template cannot stand for its statements (rendering changed their
    #: meaning): each statement text is then handled on its own.
    exact: bool = False
    checked: bool = False


@dataclass(eq=False)
class Handler:
    """A statement bound to the engine. ``args(values)`` picks the parameters from the
    slot values, in the order the bound statement numbers them."""

    kind: str
    args: Callable[[Sequence[Any]], tuple]
    view: View | None = None
    statement: st.Insert | st.Update | st.Delete | st.JoinedWrite | None = None
    make: Callable[[Sequence[Any]], WriteRequest] | None = None  # parameters -> write request
    table_key: str = ""
    #: A named view read directly: which of its columns the query selects (None: all of
    #: them, in order) and a LIMIT to cut its answer to.
    project: tuple[int, ...] | None = None
    limit: int | None = None
    #: Framed result-set header packets, by the client's protocol flags (see protocol.py).
    headers: dict[Any, Any] = field(default_factory=dict)
    columns: Any = None
    #: Text-protocol row payloads already encoded, by the identity of the reader's row
    #: they were encoded from: ``id(row) -> (row, payload)`` (see protocol.py), charged
    #: to the server's ReplyBudget.
    encoded: dict[int, tuple[Any, bytes]] = field(default_factory=dict)


@dataclass(eq=False, slots=True)
class Known:
    """A query text answered before: its handler and parameters, and for a read of a
    one-value key, the last reply encoded for it (the framed result set), the reader's
    rows it was encoded from and the client protocol flags it was framed for: while the
    reader holds that very tuple, the reply is sent again as it is."""

    handler: Handler
    args: tuple
    rows: Any = None
    reply: bytes = b""
    framing: Any = None
    end_seq: int = 0


class Texts:
    """Whole COM_QUERY packets of reads answered before (one client character set): the
    handler and parameters of each, so that a popular query skips even the split.

    An application sends a few popular texts again and again among a stream of texts it
    sends once (an IN list of one page's ids, one user's key): a text is kept only when
    it comes a second time while the one-off ones are remembered, as hashes in a table of
    ``SEEN_SLOTS`` slots made once (a hash takes the slot its low bits name): its memory
    stays what it was at start, where a set of up to ``limit`` hashes grew by megabytes no
    budget counted; a text whose slot another took since is kept a turn later. Kept texts
    live in two generations of ``limit / 2`` each: when the young one is full it becomes
    the old one, and the old one is dropped; a text found in the old generation moves to
    the young one. So the cache holds what was asked for lately, at most ``limit`` texts,
    and costs one dict lookup on a hit. A kept text is charged to ``budget`` (its reply
    is charged where it is encoded)."""

    __slots__ = ("young", "old", "seen", "limit", "budget")

    def __init__(self, limit: int, budget: ReplyBudget | None = None) -> None:
        self.young: dict[bytes, Known] = {}
        self.old: dict[bytes, Known] = {}
        self.seen = array("q", bytes(8 * SEEN_SLOTS))
        self.limit = limit
        self.budget = budget

    def get(self, data: bytes) -> Known | None:
        known = self.young.get(data)
        if known is None:
            known = self.old.pop(data, None)
            if known is not None:
                self._keep(data, known)
        return known

    def remember(self, data: bytes, known: Known) -> None:
        """Keep a text answered now if it came before (else only note it)."""
        key = hash(data)
        slot = key & (SEEN_SLOTS - 1)
        if self.seen[slot] == key or data in self.young or data in self.old:
            self._keep(data, known)  # (a kept text is answered again after DDL, say)
            return
        self.seen[slot] = key

    def _keep(self, data: bytes, known: Known) -> None:
        young = self.young
        young[data] = known
        if self.budget is not None:
            self.budget.charge(len(data) + ENTRY_BYTES)
        if len(young) >= self.limit // 2:
            self.old, self.young = young, {}

    def clear(self) -> None:
        self.young, self.old = {}, {}
        self.seen = array("q", bytes(8 * SEEN_SLOTS))

    def __len__(self) -> int:
        return len(self.young) + len(self.old)


def picker(slots: Sequence[int], negated: Sequence[int] = ()) -> Callable[[Sequence[Any]], tuple]:
    """A fast function from slot values to the parameter tuple (the ``negated``-th
    parameters negated: ``id = -5`` reads key -5 from the view of ``id = ?``)."""
    if negated:
        get = picker(slots)
        flip = frozenset(negated)
        return lambda values: tuple(_negative(v) if i in flip else v
                                    for i, v in enumerate(get(values)))
    if not slots:
        return lambda values: ()
    if len(slots) == 1:
        i = slots[0]
        return lambda values: (values[i],)
    get = itemgetter(*slots)
    return lambda values: get(values)


def _negative(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, str):  # MySQL: -'5' is -5
        value = decimal.Decimal(value.strip() or "0")
    return -value


class StatementCache:
    """Shapes by template and handlers by (template, ``?`` slots, constants), shared by
    every connection of a server. Safe to use from the event loop and worker threads:
    entries are only added (or the whole dict replaced), never changed in place."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.shapes: dict[str, Shape] = {}
        self.handlers: dict[Any, Handler] = {}
        #: Whole COM_QUERY packets of reads answered before, by character set.
        self.texts: dict[str, Texts] = {}
        self.framings: dict[Any, Any] = {}
        #: What the encoded replies kept by texts and handlers may take (reply_cache.py).
        self.replies = ReplyBudget(reply_cache_bytes(db.graph.memory_limit),
                                   self._drop_replies)
        self._lock = threading.Lock()

    # ..................................................................... lookup

    def lookup(self, split: Split, sql: str) -> Handler | None:
        """The cached handler of a statement, if it has one that is still current."""
        shape = self.shapes.get(split.template)
        if shape is None:
            return None
        handler = self.handlers.get(self._key(shape, split, sql))
        if handler is None or not self.current(handler):
            return None
        return handler

    def shape(self, split: Split, sql: str) -> Shape:
        """The shape of a statement's template (parsed now if new)."""
        shape = self.shapes.get(split.template)
        if shape is None:
            shape = analyze(split, sql)
            self._put(self.shapes, split.template, shape)
        return shape

    def handler(self, split: Split, sql: str) -> Handler:
        """The handler of a READ or WRITE statement, built if needed (may create a view:
        call it off the event loop)."""
        shape = self.shape(split, sql)
        key = self._key(shape, split, sql)
        handler = self.handlers.get(key)
        if handler is not None and self.current(handler):
            return handler
        handler = self._build(shape, split, sql)
        self._put(self.handlers, self._key(shape, split, sql), handler)
        return handler

    def texts_for(self, codec: str) -> Texts:
        texts = self.texts.get(codec)
        if texts is None:
            texts = self.texts[codec] = Texts(TEXT_CACHE_LIMIT, self.replies)
        return texts

    def framing(self, key: Any) -> Any:
        """One object for each distinct client framing (protocol flags, character set,
        end-of-result packet), so that a cached reply's framing is checked by identity."""
        return self.framings.setdefault(key, key)

    def clear(self) -> None:
        """Forget every handler (after DDL: bound statements refer to the old catalog)."""
        self.handlers = {}
        for texts in self.texts.values():
            texts.clear()

    def _drop_replies(self) -> None:
        """Empty every cache of encoded replies (the ReplyBudget is spent). A connection
        in the middle of a reply keeps writing to the dict it holds, which is let go."""
        for handler in list(self.handlers.values()):
            handler.encoded = {}
        for texts in list(self.texts.values()):
            texts.clear()

    def rebind(self, db: Database) -> None:
        """Bind statements to another database from now on (a replica's new follower);
        shapes are the SQL's own and stay."""
        self.db = db
        self.replies.limit = reply_cache_bytes(db.graph.memory_limit)
        self.clear()

    # ..................................................................... building

    def _key(self, shape: Shape, split: Split, sql: str) -> Any:
        if shape.exact or not split.exact:
            return sql
        placeholders = shape.positions if shape.params_ok else frozenset()
        if len(placeholders) == len(split.texts):  # every literal is a parameter
            return (split.template, split.params, ())
        consts = tuple(t for i, t in enumerate(split.texts) if i not in placeholders)
        return (split.template, split.params, consts)

    def current(self, handler: Handler) -> bool:
        """Whether the view or table a handler is bound to is still the one of that name
        (DDL from another connection or the HTTP API may have replaced it)."""
        if handler.kind == READ:
            return handler.view is not None and self.db.is_current(handler.view)
        table = self.db.catalog.tables.get(handler.table_key)
        return table is getattr(handler.statement, "table", None)

    def _build(self, shape: Shape, split: Split, sql: str) -> Handler:
        if not shape.checked:
            self._check(shape, split, sql)
        if shape.exact or not split.exact:
            return self._bind(shape.kind, sql, list(split.params), [])
        constants = _render(shape, split, set(split.params))
        if not shape.params_ok or not (shape.positions - set(split.params)):
            return self._bind(shape.kind, *constants)
        try:
            return self._bind(shape.kind,
                              *_render(shape, split, shape.positions | set(split.params)))
        except SqlError as refused:
            try:
                handler = self._bind(shape.kind, *constants)
            except SqlError:
                raise refused from None  # the statement's own error (unknown column, ...)
        # The engine takes the statement with its literals but not with parameters there
        # (two range columns, say): this shape keeps its literals from now on.
        shape.params_ok = False
        return handler

    def _bind(self, kind: str, text: str, order: list[int], negated: list[int]) -> Handler:
        db = self.db
        node = parse_one(text)  # once: the engine takes the parsed statement
        if kind == READ:
            direct = direct_read(node, db, order, negated)
            if direct is not None:
                return direct
            view = db.prepare(text, parsed=node)
            return Handler(READ, picker(order, negated), view=view)
        statement = st.bind(node, db.catalog, text)
        if not isinstance(statement, st.WRITES):
            raise UnsupportedSqlError(f"not a write statement: {text[:60]!r}")
        if statement.param_count != len(order):
            raise ParameterCountError(
                f"statement takes {statement.param_count} parameter(s), got {len(order)}"
            )
        return Handler(WRITE, picker(order, negated), statement=statement,
                       make=db.writer(statement), table_key=statement.table.name.lower())

    def _check(self, shape: Shape, split: Split, sql: str) -> None:
        """Once per template: the rendered template, with the literals put back, must
        parse to the statement the client sent; otherwise statements of this template are
        handled by their exact text."""
        with_values, _, _ = _render(shape, split, set(split.params))
        try:
            same = parse_one(with_values) == local_names(parse_one(sql))
        except SqlError:
            same = False
        shape.exact = shape.exact or not same
        shape.checked = True

    def _put(self, cache: dict, key: Any, value: Any) -> None:
        if len(cache) >= CACHE_LIMIT:
            with self._lock:
                cache.clear()
        cache[key] = value


def _render(shape: Shape, split: Split,
            placeholders: set[int] | frozenset[int]) -> tuple[str, list[int], list[int]]:
    """The template's SQL with the ``placeholders`` slots as ``?`` and the others as the
    literals the client wrote; returns it with the slot of each ``?`` in text order, and
    which of those ``?`` take their value negated (``-5`` became ``?``)."""
    order: list[int] = []
    negated: list[int] = []

    def replace(match: re.Match[str]) -> str:
        minus, slot = match.group(1), int(match.group(2))
        if slot not in placeholders:
            return minus + split.texts[slot]
        if minus and slot in shape.negated:
            negated.append(len(order))
            minus = ""
        order.append(slot)
        return minus + "?"

    return _RENDERED_MARKER.sub(replace, shape.rendered), order, negated


# --------------------------------------------------------------------------- analysis


def analyze(split: Split, sql: str) -> Shape:
    """Parse a template and decide its kind and parameter positions."""
    if _SHOW_VIEWS.fullmatch(sql):
        return Shape(SHOW, checked=True)
    if control_statement(sql) is not None:
        return Shape(TRANSACTION, checked=True)
    exact = not split.exact
    try:
        node = parse_one(sql if exact else with_markers(split.template, _MARKER))
    except SqlError:
        if exact:
            raise
        node = parse_one(sql)  # a bad statement raises its own error, located in its text
        exact = True  # markers where sqlglot wants a constant (``DECIMAL(10, 2)``)
    kind = _kind(node, sql)
    # Only the kinds answered from the template's tree keep it: the others are bound or
    # run from their text, and a tree (tens of kilobytes for a CREATE VIEW) kept for each
    # of up to CACHE_LIMIT templates would be memory the server's limit does not see.
    if kind not in (READ, WRITE):
        return Shape(kind, node=node if kind in _ANSWERED_FROM_TREE else None, checked=True)
    node = local_names(node)
    if exact:
        return Shape(kind, rendered=sql, exact=True, checked=True)
    positions, negated = _positions(node)
    return Shape(kind, rendered=node.sql(dialect=DIALECT), positions=positions,
                 negated=negated)


def local_names(node: exp.Expr) -> exp.Expr:
    """``rivulet.stories`` as ``stories``: the server's one database may be named."""
    for table in node.find_all(exp.Table):
        if table.args.get("db") is not None and table.db.lower() == DATABASE_NAME:
            table.set("db", None)
    return node


def _kind(node: exp.Expr, sql: str) -> str:
    if isinstance(node, (exp.Select, exp.SetOperation)):
        if has_lock_call(node):
            return NAMED_LOCK
        tables = list(node.find_all(exp.Table))
        if any(t.db.lower() in _SYSTEM_SCHEMAS for t in tables):
            return CHATTER
        if all(is_dual(t) for t in tables) and asks_session(node):
            return CHATTER  # the session's values first (protocol.py), then maybe a read
        if reads_clock(node):
            return CLOCK
        return READ
    if isinstance(node, (exp.Insert, exp.Update, exp.Delete)):
        return WRITE
    if isinstance(node, (exp.Create, exp.Drop, exp.Alter, exp.TruncateTable)) \
            or is_rename_table(node):
        return DDL
    if isinstance(node, exp.Show):
        return SHOW if node.name.upper() in ("TABLES", "CREATE TABLE", "CREATE VIEW",
                                            "COLUMNS", "FIELDS", "INDEX",
                                            "DATABASES") else CHATTER
    if isinstance(node, exp.Describe):
        if isinstance(node.this, exp.Query) or re.match(r"\s*EXPLAIN\b", sql, re.I):
            return EXPLAIN
        return SHOW
    if isinstance(node, exp.Set):
        return SET
    if isinstance(node, (exp.Transaction, exp.Commit, exp.Rollback)):
        raise UnsupportedSqlError(f"unsupported transaction statement {sql.strip()[:60]!r}")
    if isinstance(node, (exp.Use, exp.Kill)):
        return CHATTER
    raise UnsupportedSqlError(f"unsupported statement {sql.strip()[:60]!r}")


#: What mysql-mimic answers from the session in a SELECT without FROM (drivers ask for
#: these at connect time): ``@@variables`` and these functions. A SELECT of nothing but
#: them and plain literals is mimic's; any other is an ad-hoc read (the planner's one-row
#: source), with the session's values put in first (:func:`is_session_select`).
_SESSION_FUNCTIONS = (exp.CurrentSchema, exp.CurrentUser, exp.SessionUser, exp.CurrentVersion)
SESSION_FUNCTION_NAMES = frozenset({"USER", "SYSTEM_USER", "CONNECTION_ID", "SCHEMA",
                                    "DATABASE", "VERSION", "CURRENT_USER", "SESSION_USER",
                                    "CURRENT_SCHEMA", "CURRENT_VERSION"})
_BIGINT = 2 ** 63


def asks_session(node: exp.Expr) -> bool:
    """Whether a query asks for an ``@@variable`` or a session function anywhere."""
    return any(isinstance(n, (exp.SessionParameter, *_SESSION_FUNCTIONS))
               or (isinstance(n, exp.Anonymous) and n.name.upper() in SESSION_FUNCTION_NAMES)
               for n in node.walk())


def is_session_select(node: exp.Expr) -> bool:
    """Whether mysql-mimic answers a SELECT as MySQL does: no FROM nor any other clause,
    and only literals (strings, BIGINT integers, NULL, TRUE/FALSE), ``@@variables`` and
    the session's functions (``DATABASE()``, ``USER()``, ``VERSION()``, ``CONNECTION_ID()``)
    in its list. Anything else there mimic would compute with sqlglot's Python executor,
    with Python's semantics instead of MySQL's (``5/2`` a double, ``'1abc' = 1`` false);
    rivulet's planner computes it."""
    if not isinstance(node, exp.Select):
        return False
    if any(node.args.get(key) for key in node.args if key not in ("expressions", "limit")):
        return False
    return all(_is_session_value(item.this if isinstance(item, exp.Alias) else item)
               for item in node.expressions)


def _is_session_value(value: exp.Expr) -> bool:
    if isinstance(value, (exp.Null, exp.Boolean, exp.SessionParameter)):
        return True
    if isinstance(value, exp.Neg):
        value = value.this
        return isinstance(value, exp.Literal) and not value.is_string and _small_int(value)
    if isinstance(value, exp.Literal):
        return value.is_string or _small_int(value)
    if isinstance(value, (*_SESSION_FUNCTIONS, exp.Anonymous)):
        name = value.name if isinstance(value, exp.Anonymous) else value.sql_name()
        return not list(value.iter_expressions()) and (
            isinstance(value, _SESSION_FUNCTIONS) or name.upper() in SESSION_FUNCTION_NAMES)
    return False


def _small_int(literal: exp.Literal) -> bool:
    return literal.this.isdigit() and int(literal.this) < _BIGINT


def _is_marker(node: exp.Expr) -> bool:
    return (isinstance(node, exp.Column) and not node.table
            and _MARKER_RE.fullmatch(node.name) is not None)


def _is_value(node: exp.Expr) -> bool:
    """A slot, or a slot with a unary minus (``-5``)."""
    return _is_marker(node.this if isinstance(node, exp.Neg) else node)


def _slot(node: exp.Expr) -> int:
    marker = node.this if isinstance(node, exp.Neg) else node
    found = _MARKER_RE.fullmatch(marker.name)
    assert found is not None  # a slot (see _is_value)
    return int(found.group(1))


def _positions(node: exp.Expr) -> tuple[frozenset[int], frozenset[int]]:
    """Slots in places where the statement can take a parameter instead of a constant,
    and those of them written with a minus."""
    values: list[exp.Expr] = []
    if isinstance(node, exp.Insert) and isinstance(node.expression, exp.Values):
        for row in node.expression.expressions:
            values.extend(row.expressions if isinstance(row, exp.Tuple) else [row])
    if isinstance(node, exp.Update):
        values.extend(eq.expression for eq in node.expressions if isinstance(eq, exp.EQ))
    if isinstance(node, (exp.Select, exp.Update, exp.Delete)):
        where = node.args.get("where")
        if where is not None:
            for c in conjuncts(where.this):
                values.extend(_condition_values(c))
    values = [v for v in values if _is_value(v)]
    return (frozenset(_slot(v) for v in values),
            frozenset(_slot(v) for v in values if isinstance(v, exp.Neg)))


def _condition_values(c: exp.Expr) -> list[exp.Expr]:
    def column(n: exp.Expr) -> bool:
        return isinstance(n, exp.Column) and not _is_marker(n)

    if isinstance(c, _COMPARISONS):
        if column(c.this) and _is_value(c.expression):
            return [c.expression]
        if column(c.expression) and _is_value(c.this):
            return [c.this]
    if isinstance(c, exp.In) and column(c.this) and not c.args.get("query") and c.expressions:
        if all(_is_value(e) for e in c.expressions):
            return list(c.expressions)
    if isinstance(c, exp.Between) and column(c.this):
        low, high = c.args.get("low"), c.args.get("high")
        if low is not None and high is not None and _is_value(low) and _is_value(high):
            return [low, high]
    return []


# --------------------------------------------------------------------------- named views


class _NotDirect(Exception):
    """A SELECT of a view that is not a read of it by its parameters."""


def direct_read(node: exp.Expr, db: Database, order: list[int],
                negated: list[int]) -> Handler | None:
    """A SELECT of a view of the program by its parameters (``SELECT * FROM
    StoriesWithVC WHERE id = 5``) reads that view, as the view's own ``lookup`` would.

    Returns None for any other query. The SELECT may list the view's columns (or ``*``),
    give each equality parameter of the view as ``col = value`` (``col IN (...)`` for an
    ``IN (?)`` parameter) and end with ``LIMIT n``. Any other SELECT of a view with
    parameters reads it as a table (the planner's ``_view_as_table``: ``SELECT * FROM
    StoriesWithVC``, ``WHERE id IN (1, 2)``, a range); one of a view with a LIMIT, which
    is no table of another query, is an error that says what it takes.
    """
    if not isinstance(node, exp.Select) or node.args.get("joins"):
        return None
    source = node.args.get("from") or node.args.get("from_")
    table = source.this if source is not None else None
    if not isinstance(table, exp.Table) or table.db:
        return None
    plan = db.catalog.view(table.name)
    if plan is None:
        return None
    if plan.param_count == 0 and plan.limit is None:
        return None  # an ordinary view: it can be a table of any query
    try:
        return _read_by_parameters(node, db, plan, order, negated)
    except _NotDirect as exc:
        if plan.limit is not None:
            raise UnsupportedSqlError(str(exc)) from None
        return None


def _read_by_parameters(node: exp.Select, db: Database, plan: ViewPlan, order: list[int],
                        negated: list[int]) -> Handler:
    name = plan.name
    for arg in ("group", "having", "order", "distinct", "offset", "windows", "qualify"):
        if node.args.get(arg):
            raise _NotDirect(
                f"view {name!r} takes parameters or has a LIMIT: it can be read with "
                f"SELECT columns FROM {name} WHERE <its parameter columns> = values [LIMIT n], "
                f"without {arg.upper()}")
    visible = [c.name.lower() for c in plan.root.columns[: plan.visible]]
    try:
        project = _projection(node, visible, name)
    except UnsupportedSqlError as exc:
        raise _NotDirect(str(exc)) from None
    where = node.args.get("where")
    by_column: dict[str, list[int]] = {}
    positions = {id(p): i for i, p in enumerate(
        n for n in (where.walk(bfs=False) if where is not None else ())
        if isinstance(n, exp.Placeholder))}
    for c in conjuncts(where.this) if where is not None else []:
        column, params = _parameter_condition(c, positions)
        if column is None or column in by_column:
            raise _NotDirect(
                f"reading view {name!r}: each condition must be `column = value` or "
                f"`column IN (values)` on one of its parameter columns, got "
                f"{c.sql(dialect=DIALECT)[:60]!r}")
        by_column[column] = params
    if plan.range_column is not None or plan.bounds_keyed:
        raise _NotDirect(f"view {name!r} has range parameters: read it with "
                         f"prepared-statement parameters through its defining query")
    if plan.alternatives is not None:
        raise _NotDirect(f"view {name!r} has parameters under an OR on different columns "
                         f"(`a = ? OR b = ?`): read it with prepared-statement parameters "
                         f"through its defining query")
    if plan.listed:
        raise _NotDirect(f"view {name!r} has IN (?, ...) lists taking as many values as "
                         f"they have ? (several lists, or `col = ? OR col = ?`): read it "
                         f"with prepared-statement parameters through its defining query")
    parameters = {plan.root.columns[c].name.lower() for c in plan.key}
    strangers = sorted(set(by_column) - parameters)
    if strangers:
        raise _NotDirect(
            f"view {name!r} cannot be filtered by {strangers[0]!r}: only by its parameter "
            f"columns ({', '.join(sorted(parameters))})")
    by_param: dict[int, list[int]] = {}
    for root_col, param in zip(plan.key, plan.key_params):
        column = plan.root.columns[root_col].name.lower()
        found = by_column.pop(column, None)
        if found is None:
            raise _NotDirect(f"view {name!r} takes a value for {column!r}: "
                             f"add `{column} = value` to the WHERE clause")
        if len(found) != 1 and param not in plan.in_list:
            raise _NotDirect(f"view {name!r} takes one value for {column!r}")
        by_param[param] = found
    picked = [i for p in sorted(by_param) for i in by_param[p]]
    slots = [order[i] for i in picked]
    flips = [k for k, i in enumerate(picked) if i in negated]
    limit = node.args.get("limit")
    cut = None
    if limit is not None:
        value = limit.expression
        if not isinstance(value, exp.Literal) or value.is_string:
            raise UnsupportedSqlError(f"reading view {name!r}: LIMIT takes a number")
        cut = int(value.this)
    view = db.view(name)
    return Handler(READ, picker(slots, flips), view=view,
                   project=project, limit=cut)


def _projection(node: exp.Select, visible: list[str], name: str) -> tuple[int, ...] | None:
    items = node.expressions
    if len(items) == 1 and isinstance(items[0], exp.Star):
        return None
    out = []
    for item in items:
        target = item.this if isinstance(item, exp.Alias) else item
        if isinstance(item, exp.Alias) or not isinstance(target, exp.Column) \
                or target.name.lower() not in visible:
            raise UnsupportedSqlError(
                f"reading view {name!r}: select `*` or its columns ({', '.join(visible)}), "
                f"got {item.sql(dialect=DIALECT)[:60]!r}")
        out.append(visible.index(target.name.lower()))
    return None if out == list(range(len(visible))) else tuple(out)


def _parameter_condition(c: exp.Expr, positions: dict[int, int]) -> tuple[str | None, list[int]]:
    if isinstance(c, exp.EQ):
        col, value = ((c.this, c.expression) if isinstance(c.this, exp.Column)
                      else (c.expression, c.this))
        if isinstance(col, exp.Column) and isinstance(value, exp.Placeholder):
            return col.name.lower(), [positions[id(value)]]
    if isinstance(c, exp.In) and isinstance(c.this, exp.Column) and c.expressions \
            and all(isinstance(e, exp.Placeholder) for e in c.expressions):
        return c.this.name.lower(), [positions[id(e)] for e in c.expressions]
    return None, []
