"""Pre-warming partial views: fill chosen keys before anyone reads them.

After a restart every partial view is empty, so the first read of each hot key pays an
upquery. ``db.prewarm(view, keys)`` fills keys ahead of time, and :func:`save_hot_keys`
(at ``close``) records the hot keys of every partial view in the data directory, which
:func:`prewarm_saved` fills again at the next ``open`` (``rivulet.open(...,
prewarm=False)`` turns that off).

Which keys are hot: the keys a view's reader still holds (eviction has already dropped the
cold ones), those read since the last pass of the eviction clock first, then by how often
they were read; at most :data:`HOT_KEYS_PER_VIEW` per view, and only keys that were read.
A view is pre-warmed again only if its SQL is unchanged (a key means nothing to another
query).

How: all missing keys of a view in one batched upquery, under the graph lock, exactly the
path a read that misses takes (so every partial state on the way fills consistently, at
the graph's LSN). A pre-warm is not a read: it counts no miss, and filled keys count hits
only when they are read.
"""

from __future__ import annotations

import logging
import os
import pickle
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from rivulet.errors import UpqueryTimeout
from rivulet.state.reader import KeyedReader

if TYPE_CHECKING:
    from rivulet.database import Database
    from rivulet.views import View

log = logging.getLogger("rivulet")

#: The file of hot keys in the data directory.
HOT_KEYS_FILE = "hot_keys.pickle"
#: At most this many keys per view are saved.
HOT_KEYS_PER_VIEW = 10_000
#: Keys per upquery batch (bounds the graph lock's hold time; reads go on in between).
BATCH_KEYS = 5_000


def prewarm_view(db: Database, view: View, keys: Iterable[Any]) -> int:
    """Fill ``keys`` of ``view`` (values, or tuples of the key's values); returns how many
    keys were missing and are now filled. A full view holds every key already: 0."""
    built = db._built[view.name.lower()]
    state = built.state
    if not state.partial:
        return 0
    wanted = _state_keys(view, keys)
    if db._bootstrap.waits(built) and not db._bootstrap.await_loaded(db.upquery_timeout):
        raise UpqueryTimeout(f"view {view.name!r}: its state is still being recovered")
    filled = 0
    for start in range(0, len(wanted), BATCH_KEYS):
        batch = wanted[start:start + BATCH_KEYS]
        with db._graph_lock:
            db._check_open()
            if db._built.get(view.name.lower()) is not built:
                return filled  # dropped meanwhile
            missing = state.missing(batch)
            if missing:
                rows = db.graph.upquery(built.root, built.plan.key, missing)
                state.fill(missing, rows)
                filled += len(missing)
            db.graph.enforce_memory_limit()
    return filled


def _state_keys(view: View, keys: Iterable[Any]) -> list[Any]:
    """Keys as the reader holds them: coerced to the key columns' kinds, a scalar for a
    one-column key; keys that cannot match (a NULL, a value of the wrong kind) dropped."""
    width = len(view.plan.key)
    out: dict[Any, None] = {}
    for key in keys:
        values = key if isinstance(key, tuple) else (key,)
        if len(values) != width:
            raise ValueError(f"view {view.name!r} is keyed by {width} value(s), "
                             f"got a key of {len(values)}: {key!r}")
        coerced = view._coerce_key(values)
        if coerced is None or any(v is None for v in coerced):
            continue
        out[coerced[0] if width == 1 else coerced] = None
    return list(out)


def hot_keys(db: Database) -> dict[str, dict[str, Any]]:
    """Per partial view: its SQL and its hot keys (module doc), as reader keys."""
    out: dict[str, dict[str, Any]] = {}
    with db._graph_lock:
        for built in db._built.values():
            state = built.state
            if not state.partial or not state.entries:
                continue
            if isinstance(state, KeyedReader):
                read = [(k, e) for k, e in list(state.entries.items()) if e.reads]
                read.sort(key=lambda ke: (ke[1].reads != ke[1].seen, ke[1].reads), reverse=True)
                keys = [k for k, _ in read[:HOT_KEYS_PER_VIEW]]
            else:  # a range reader keeps no per-key read counts: the keys it holds
                keys = list(state.entries)[:HOT_KEYS_PER_VIEW]
            if keys:
                out[built.plan.name] = {"sql": built.plan.sql, "keys": keys}
    return out


def save_hot_keys(db: Database) -> Path | None:
    """Write the hot keys of every partial view into the data directory (atomically);
    nothing when no partial view holds a read key (an older file is removed)."""
    path = db.path / HOT_KEYS_FILE
    keys = hot_keys(db)
    if not keys:
        path.unlink(missing_ok=True)
        return None
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(pickle.dumps(keys, protocol=pickle.HIGHEST_PROTOCOL))
    os.replace(tmp, path)
    return path


def prewarm_saved(db: Database) -> int:
    """Pre-warm the keys saved at the last close (views whose SQL is unchanged)."""
    path = db.path / HOT_KEYS_FILE
    try:
        saved = pickle.loads(path.read_bytes())
    except FileNotFoundError:
        return 0
    except Exception:  # a damaged hint is not an error of the database
        log.warning("ignoring unreadable %s", path)
        return 0
    filled = 0
    for name, entry in saved.items():
        built = db._built.get(name.lower())
        if built is None or built.plan.sql != entry.get("sql") or not built.state.partial:
            continue
        view = db._views[name.lower()]
        keys = [k if isinstance(k, tuple) and len(view.plan.key) != 1 else (k,)
                for k in entry["keys"]]
        try:
            filled += prewarm_view(db, view, keys)
        except Exception:
            log.exception("pre-warming view %s failed", name)
    return filled


__all__ = ["HOT_KEYS_FILE", "hot_keys", "prewarm_saved", "prewarm_view", "save_hot_keys"]
