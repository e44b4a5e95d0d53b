"""The ``rivulet`` command line: ``serve`` (the main command), ``demo``, ``explain``,
``status``, ``shell``, ``user``, ``backup``, ``restore``; ``import`` and ``verify`` come
from rivulet/cli/pipeline.py (the command line is the top layer: its handlers open the
database through ``rivulet.open`` and drive the pipeline below it)."""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.resources
import random
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import rivulet
from rivulet.engine.database import Database
from rivulet.engine.explain import explain
from rivulet.errors import RivuletError
from rivulet.sql.parse import split_statements

#: ``rivulet serve``'s exit status once the database failed (sysexits.h's EX_SOFTWARE): a
#: supervisor restarts it, and opening the directory again recovers from the durable log.
EXIT_FAILED = 70
#: Seconds a failed server still answers (with errors, and 503 on /health) before it stops.
FAILED_GRACE = 1.0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rivulet", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser(
        "serve", help="serve a database over the MySQL protocol and HTTP until stopped",
        description="Open (or create) the database, load the news example on first start, "
                    "and serve it to MySQL clients and over HTTP until SIGINT/SIGTERM.")
    serve.add_argument("--data-dir", default="data", help="database directory (default: ./data)")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default: 127.0.0.1, loopback only)")
    serve.add_argument("--mysql-port", type=int, default=3307,
                       help="MySQL protocol port (default: 3307; 0 picks a free port)")
    serve.add_argument("--http-port", type=int, default=8080,
                       help="HTTP API port (default: 8080; 0 picks a free port)")
    serve.add_argument("--no-http", action="store_true", help="do not serve the HTTP API")
    serve.add_argument("--replicas", type=int, default=0, metavar="N",
                       help="replica processes serving reads of MySQL connections on more "
                            "cores (default: 0; see README, 'Replicas')")
    serve.add_argument("--memory-limit", default=None,
                       help="bound on in-memory state, e.g. 256MB (default: none)")
    serve.add_argument("--join-caches", choices=("lean", "kept"), default="lean",
                       help="keep what reads fill in join indexes over base tables and full "
                            "aggregates (kept: faster misses, more memory; default: lean)")
    serve.add_argument("--no-demo", action="store_true",
                       help="start empty: no news example program or sample data")
    serve.add_argument("--tls-cert", default=None,
                       help="PEM certificate (chain): TLS for MySQL clients and HTTPS for the "
                            "HTTP API (with --tls-key)")
    serve.add_argument("--tls-key", default=None, help="PEM private key of --tls-cert")
    _limit_options(serve)
    serve.add_argument("--stories", type=int, default=10_000, help="sample stories (first start)")
    serve.add_argument("--votes", type=int, default=100_000, help="sample votes (first start)")
    serve.add_argument("--pipeline", choices=("inprocess", "spark"), default="inprocess",
                       help="who maintains the views: the in-process dataflow (default) or "
                            "Spark Structured Streaming (see the README)")
    serve.add_argument("--spark-master", default="local[*]",
                       help="Spark master for --pipeline spark (default: local[*])")
    serve.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE",
                       type=_spark_setting,
                       help="a Spark setting for --pipeline spark, applied last (repeatable), "
                            "e.g. spark.driver.extraJavaOptions='-XX:TieredStopAtLevel=1'")

    user = sub.add_parser("user", help="add, change or remove a MySQL user of a database",
                          description="Users live in users.json in the data directory "
                                      "(passwords stored hashed). A fresh directory has "
                                      "'root' with an empty password, from loopback only.")
    user.add_argument("name")
    user.add_argument("--password", default="", help="the password (default: empty)")
    user.add_argument("--any-host", action="store_true",
                      help="may connect from any host (default: loopback only)")
    user.add_argument("--read-only", action="store_true",
                      help="may read tables and views, but not write or change the program")
    user.add_argument("--remove", action="store_true", help="remove the user")
    user.add_argument("--data-dir", default="data")

    demo = sub.add_parser("demo", help="run the news example: load data, then reads and writes")
    demo.add_argument("--data-dir", default="data", help="database directory (default: ./data)")
    demo.add_argument("--seconds", type=float, default=5.0, help="workload duration")
    demo.add_argument("--stories", type=int, default=10_000)
    demo.add_argument("--votes", type=int, default=100_000)
    demo.add_argument("--memory-limit", default=None,
                      help="bound on in-memory state, e.g. 64MB (default: none)")
    demo.add_argument("--no-partial", action="store_true",
                      help="keep every view's state whole (no misses, more memory)")

    explain = sub.add_parser("explain", help="show the dataflow nodes behind a view")
    explain.add_argument("view")
    explain.add_argument("--data-dir", default="data")

    status = sub.add_parser("status", help="program, table sizes and LSN of a database")
    status.add_argument("--data-dir", default="data")

    shell = sub.add_parser("shell", help="an interactive SQL prompt",
                           description="SQL against a data directory (opened here) or a "
                                       "running server (--server mysql://user:pw@host:port).")
    shell.add_argument("--data-dir", default="data")
    shell.add_argument("--server", default=None,
                       help="a running server's URL, e.g. mysql://root@127.0.0.1:3307")

    backup = sub.add_parser(
        "backup", help="copy a database at one commit, while it serves and takes writes",
        description="Copy the data directory into DEST (a new or empty directory) as of one "
                    "commit: beside a running server too, whose writes go on (SQLite's "
                    "online backup; see docs/durability.md). Restore with rivulet restore.")
    backup.add_argument("dest", metavar="DEST")
    backup.add_argument("--data-dir", default="data")

    restore = sub.add_parser(
        "restore", help="check a backup and install it as a data directory",
        description="Check BACKUP (each file's size and SHA-256, SQLite's integrity check, "
                    "its LSN) and install it as --data-dir, which must be new or empty "
                    "(--force: replace what it holds) and not in use by a running process.")
    restore.add_argument("backup", metavar="BACKUP")
    restore.add_argument("--data-dir", default="data")
    restore.add_argument("--force", action="store_true",
                         help="replace the data the directory holds")

    handlers = {"serve": run_serve, "demo": run_demo, "explain": run_explain,
                "status": run_status, "shell": run_shell, "user": run_user,
                "backup": run_backup, "restore": run_restore}
    handlers.update(_spark_commands(sub))
    args = parser.parse_args(argv)
    try:
        return handlers[args.command](args)
    except RivuletError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


def _spark_commands(sub: Any) -> dict[str, Any]:
    """``import`` and ``verify``, the commands of the Spark pipeline."""
    from rivulet.cli import pipeline

    return pipeline.register(sub)


# --------------------------------------------------------------------------- serve


def run_serve(args: argparse.Namespace) -> int:
    """One process: the engine, the MySQL server (on this thread's event loop) and the
    HTTP API (uvicorn, on its own thread). SIGINT/SIGTERM stop both, then the database
    closes, which commits and propagates every acknowledged write."""
    import asyncio
    import signal

    from rivulet.server.allocator import limit_arenas
    from rivulet.server.auth import UserStore, tls_context
    from rivulet.server.mysql.primary import Replicas, replica_options
    from rivulet.server.mysql.server import MySQLServer, new_event_loop

    sys.setswitchinterval(0.0005)  # see run_demo
    limit_arenas()
    if (args.tls_cert is None) != (args.tls_key is None):
        print("error: --tls-cert and --tls-key go together", file=sys.stderr)
        return 2
    if args.replicas < 0 or (args.replicas and args.pipeline == "spark"):
        print("error: --replicas takes a count of 0 or more, and serves the in-process "
              "pipeline only", file=sys.stderr)
        return 2
    tls = tls_context(args.tls_cert, args.tls_key) if args.tls_cert else None
    path = Path(args.data_dir)
    db = _open_for_serving(path, args)
    try:
        if not args.no_demo and not db.catalog.tables:
            db.execute_script(news_program())
            load_news_sample(db, stories=args.stories, votes=args.votes)
            print(f"rivulet: installed the news example ({args.stories:,} stories, "
                  f"{args.votes:,} votes)", flush=True)
        if args.replicas:
            db.finish_conversions()  # a replica opens on a program fully migrated
        users = UserStore(path)
        http = None if args.no_http else _start_http(db, args.host, args.http_port, users, args)

        async def serve() -> None:
            server = MySQLServer(db, host=args.host, port=args.mysql_port, users=users, tls=tls)
            await server.start()
            if args.replicas:
                server.replicas = Replicas(server, args.replicas, replica_options(args))
                await server.replicas.start()
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, stop.set)

            def failed(exc: BaseException) -> None:  # (in the failing thread)
                loop.call_soon_threadsafe(stop.set)

            db.on_failure(failed)
            if db.directory_lock is not None:  # (named to whoever finds the directory held)
                db.directory_lock.describe(mysql_port=server.port,
                                           http_port=None if http is None else http.port)
            _print_connect(path, args.host, server.port, http)
            await stop.wait()
            # Shutting down flushes acknowledged writes: a repeated SIGTERM must not cut it
            # short (a second Ctrl-C still does).
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            if db.failure is not None:
                print(f"rivulet: the database failed ({db.failure}); stopping for a restart, "
                      "which recovers from the durable log", file=sys.stderr, flush=True)
                await asyncio.sleep(FAILED_GRACE)  # statements in flight get their errors
            else:
                print("rivulet: stopping", flush=True)
            await server.stop()

        try:
            with asyncio.Runner(loop_factory=lambda: new_event_loop(tls=tls is not None)) as runner:
                runner.run(serve())
        finally:
            if http is not None:
                http.stop()
    finally:
        db.close()
    print(f"rivulet: stopped (LSN {db.lsn})", flush=True)
    return EXIT_FAILED if db.failure is not None else 0


def _limit_options(parser: argparse.ArgumentParser) -> None:
    """One option per field of :class:`rivulet.engine.limits.Limits`, and the upquery timeout."""
    from rivulet.engine.limits import Limits

    defaults = Limits()
    for name in Limits.names():
        default = getattr(defaults, name)
        parser.add_argument("--" + name.replace("_", "-"), type=int, default=default,
                            help=f"{Limits.help(name)} (default: {default:,})")
    parser.add_argument("--upquery-timeout", type=float, default=30.0,
                        help="seconds a read that misses may wait for its upquery (default: 30)")


def _spark_setting(text: str) -> tuple[str, str]:
    """``KEY=VALUE`` of ``--spark-conf`` (argparse reports the error as a usage error)."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip().startswith("spark."):
        raise argparse.ArgumentTypeError(f"expected spark.KEY=VALUE, got {text!r}")
    return key.strip(), value


def _open_for_serving(path: Path, args: argparse.Namespace) -> Database:
    from rivulet.engine.limits import Limits

    limits = Limits.from_options(args)
    if args.pipeline == "spark":
        from rivulet.spark.session import SparkConfig

        return rivulet.open(path, memory_limit=args.memory_limit, pipeline="spark",
                            join_caches=args.join_caches,
                            spark=SparkConfig(master=args.spark_master,
                                              extra=dict(args.spark_conf)), limits=limits,
                            upquery_timeout=args.upquery_timeout)
    return rivulet.open(path, memory_limit=args.memory_limit, limits=limits,
                        join_caches=args.join_caches, upquery_timeout=args.upquery_timeout)


def _start_http(db: Database, host: str, port: int, users: Any, args: argparse.Namespace) -> Any:
    try:
        from rivulet.server.http.app import make_app
        from rivulet.server.http.serve import serve_http
    except ImportError as exc:  # pragma: no cover - only while the HTTP API is missing
        print(f"rivulet: no HTTP API ({exc})", file=sys.stderr)
        return None
    return serve_http(make_app(db, users=users), host, port, tls_cert=args.tls_cert,
                      tls_key=args.tls_key)


def _print_connect(path: Path, host: str, port: int, http: Any) -> None:
    print(f"rivulet {rivulet.__version__} serving {path.resolve()}")
    print(f"  MySQL:  mysql -h {host} -P {port} -u root      (database 'rivulet')")
    print(f"          python: pymysql.connect(host={host!r}, port={port}, user='root')")
    if http is not None:
        print(f"  HTTP:   {http.url}/health   {http.url}/views   {http.url}/metrics")
    print("  stop with Ctrl-C (or SIGTERM)", flush=True)


def run_user(args: argparse.Namespace) -> int:
    from rivulet.server.auth import ANY_HOST, LOOPBACK, UserStore

    store = UserStore(args.data_dir)
    if args.remove:
        try:
            store.remove_user(args.name)
        except KeyError:
            print(f"error: no user {args.name!r}", file=sys.stderr)
            return 1
        print(f"removed user {args.name!r}")
        return 0
    try:
        store.set_user(args.name, args.password, ANY_HOST if args.any_host else LOOPBACK,
                       read_only=args.read_only)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    where = "any host" if args.any_host else "loopback only"
    rights = "read-only" if args.read_only else "read-write"
    print(f"user {args.name!r} set ({where}, {rights}); a running server sees it after a restart")
    return 0


# --------------------------------------------------------------------------- demo


def news_program() -> str:
    return (importlib.resources.files("rivulet") / "examples" / "news.sql").read_text()


def load_news_sample(db: Database, *, stories: int, votes: int, seed: int = 1) -> None:
    """Sample data for the news program: Zipf-popular stories, as on a real site."""
    rng = random.Random(seed)
    users = max(100, stories // 5)
    start = dt.datetime(2024, 1, 1)
    db.table("users").insert_many((i, f"user{i}") for i in range(users))
    batch = 10_000
    for lo in range(0, stories, batch):
        db.table("stories").insert_many(
            (i, rng.randrange(users), f"Story {i}", f"https://example.org/{i}",
             start + dt.timedelta(minutes=i))
            for i in range(lo, min(stories, lo + batch))
        )
    pick = zipf_sampler(stories, 1.08, rng)
    for lo in range(0, votes, batch):
        db.table("votes").insert_many(
            (rng.randrange(users), pick()) for _ in range(min(batch, votes - lo))
        )
    db.table("comments").insert_many(
        (i, pick(), rng.randrange(users), f"comment {i}", start + dt.timedelta(minutes=i))
        for i in range(stories)
    )
    db.settle()


def zipf_sampler(n: int, s: float, rng: random.Random) -> Callable[[], int]:
    """Draws 0..n-1 with probability proportional to 1/(rank+1)^s."""
    import bisect
    import itertools

    weights = [1.0 / (k + 1) ** s for k in range(n)]
    cdf = list(itertools.accumulate(weights))
    total = cdf[-1]
    return lambda: bisect.bisect_left(cdf, rng.random() * total)


def run_demo(args: argparse.Namespace) -> int:
    # The demo owns its process, so it may shorten the GIL switch interval: SQLite releases
    # the GIL for every row it writes, and with the default 5 ms a reader thread spinning on
    # lookups makes the writer wait that long for each row (a convoy).
    sys.setswitchinterval(0.0005)
    path = Path(args.data_dir)
    print(f"rivulet {rivulet.__version__}: opening {path.resolve()}")
    t0 = time.perf_counter()
    with rivulet.open(path, memory_limit=args.memory_limit, partial=not args.no_partial) as db:
        print(f"  opened in {time.perf_counter() - t0:.2f} s (LSN {db.lsn})")
        if not db.catalog.tables:
            db.execute_script(news_program())
            print(f"  installed the news program: views {', '.join(db.views())}")
        if not db.view("FrontPage").lookup():
            t0 = time.perf_counter()
            load_news_sample(db, stories=args.stories, votes=args.votes)
            print(f"  loaded {args.stories:,} stories and {args.votes:,} votes "
                  f"in {time.perf_counter() - t0:.2f} s")
        stories = db.storage.count(db.catalog.require_table("stories"))
        workload(db, args.seconds, stories=max(1, stories))
        print("\nfront page (top 5):")
        for row in db.view("FrontPage").lookup()[:5]:
            print(f"  story {row[0]:>6}  {row[2]:>6} votes  {row[1]}")
        stats = db.stats()
        print(f"\nstate: {stats['memory_bytes'] / 1e6:.1f} MB in memory; {stats['hits']:,} hits, "
              f"{stats['misses']:,} misses, {stats['upqueries']:,} upqueries, "
              f"{stats['evictions']:,} evictions")
    return 0


def workload(db: Database, seconds: float, *, stories: int) -> None:
    """One writer thread voting while this thread reads; prints what each did."""
    rng = random.Random(2)
    pick = zipf_sampler(stories, 1.08, rng)
    stop = threading.Event()
    written = [0]

    def writer() -> None:
        wrng = random.Random(3)
        votes = db.table("votes")
        while not stop.is_set():
            written[0] += votes.insert_many((wrng.randrange(1000), pick()) for _ in range(1000))

    thread = threading.Thread(target=writer)
    thread.start()
    by_id, front, karma = db.view("StoriesWithVC"), db.view("FrontPage"), db.view("Karma")
    reads = 0
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        for _ in range(1000):
            by_id.lookup(pick())
        front.lookup()
        karma.lookup(rng.randrange(100))
        reads += 1002
    stop.set()
    thread.join()
    t0 = time.perf_counter()
    db.settle()
    print(f"\nworkload ({seconds:.0f} s, one reader thread, one writer thread):")
    print(f"  reads:  {reads:,} lookups ({reads / seconds:,.0f}/s)")
    print(f"  writes: {written[0]:,} votes ({written[0] / seconds:,.0f}/s, durable); "
          f"views settled {time.perf_counter() - t0:.3f} s after the last write")


# --------------------------------------------------------------------------- others


def _open_to_read(path: str | Path) -> Database:
    """The database at ``path`` for a command that only reads it (``status``,
    ``explain``): opened, or, where another process writes it (a running server), followed
    read-only as a server's replica follows it."""
    from rivulet.engine.follower import Follower
    from rivulet.errors import DataDirectoryInUseError

    try:
        return rivulet.open(path)
    except DataDirectoryInUseError as exc:
        print(f"rivulet: {exc.holder} writes {str(path)!r}: reading it only", file=sys.stderr)
        return Follower(path)


def run_explain(args: argparse.Namespace) -> int:
    with _open_to_read(args.data_dir) as db:
        print(explain(db, args.view))
    return 0


def run_status(args: argparse.Namespace) -> int:
    with _open_to_read(args.data_dir) as db:
        print(f"database {Path(args.data_dir).resolve()}  LSN {db.lsn}")
        for schema in db.catalog.tables.values():
            print(f"  table {schema.name}: {db.storage.count(schema):,} rows")
        for name in db.views():
            print(f"  view {name}")
    _print_stream_status(Path(args.data_dir))
    return 0


def _print_stream_status(path: Path) -> None:
    """The Spark streams' progress, as the pipeline (running or last run) wrote it."""
    import json

    status_file = path / "stream" / "status.json"
    if not status_file.exists():
        return
    status = json.loads(status_file.read_text())
    print(f"spark streams (as of {status['time']}): shipped LSN {status['shipped_lsn']}"
          + (f", FAILED: {status['failure']}" if status.get("failure") else ""))
    for s in status["streams"]:
        print(f"  view {s['view']}: {'running' if s['active'] else 'stopped'}, batch "
              f"{s['batch_id']}, LSN {s['applied_lsn']}, lag {s['lag_lsns']} LSNs / "
              f"{s['lag_seconds']} s, last batch {s.get('batch_duration_ms')} ms, "
              f"{s.get('rows_per_second') or 0:.0f} rows/s")


def run_backup(args: argparse.Namespace) -> int:
    """Read the directory's database beside whoever holds it (WAL: no writer waits), so a
    running server is neither stopped nor gone through."""
    from rivulet.storage.backup import take_backup

    started = time.perf_counter()
    backup = take_backup(args.data_dir, args.dest)
    print(f"backed up {str(args.data_dir)!r} into {str(args.dest)!r} in "
          f"{time.perf_counter() - started:.1f} s: {backup.describe()}")
    return 0


def run_restore(args: argparse.Namespace) -> int:
    from rivulet.storage.backup import restore_backup

    backup = restore_backup(args.backup, args.data_dir, force=args.force)
    print(f"restored {str(args.backup)!r} into {str(args.data_dir)!r}: {backup.describe()}")
    return 0


def run_shell(args: argparse.Namespace) -> int:
    if args.server:
        return _shell(_server_executor(args.server))
    with rivulet.open(args.data_dir) as db:
        def run(sql: str) -> Any:
            try:
                return db.execute(sql)
            except RivuletError as exc:
                return exc
        return _shell(run)


def _shell(run: Any) -> int:
    """Read ``;``-terminated statements, run each, print rows or the error."""
    print("rivulet shell: end statements with ';', Ctrl-D to quit")
    buffer = ""
    while True:
        try:
            line = input("... " if buffer else "rivulet> ")
        except EOFError:
            print()
            return 0
        buffer += line + "\n"
        if not buffer.strip().endswith(";"):
            continue
        text, buffer = buffer, ""
        try:
            statements = [s.strip() for s in split_statements(text)]
        except RivuletError as exc:
            print(f"error: {exc}")
            continue
        for sql in statements:
            _print_result(run(sql))


def _print_result(result: Any) -> None:
    if isinstance(result, Exception):
        print(f"error: {result}")
    elif isinstance(result, list):
        for row in result:
            print("  " + " | ".join("NULL" if v is None else str(v) for v in row))
        print(f"({len(result)} rows)")
    else:
        print(f"ok ({result} rows)")


def _server_executor(url: str) -> Any:
    """A function running SQL on the server at ``url`` (``mysql://user:pw@host:port``)."""
    from urllib.parse import unquote, urlsplit

    try:
        import pymysql
    except ImportError:
        raise RivuletError("rivulet shell --server needs PyMySQL (pip install pymysql)") from None
    parts = urlsplit(url if "://" in url else f"mysql://{url}")
    if parts.scheme != "mysql":
        raise RivuletError(f"--server takes a mysql://user:password@host:port URL, got {url!r}")
    try:
        conn = pymysql.connect(host=parts.hostname or "127.0.0.1", port=parts.port or 3307,
                               user=unquote(parts.username or "root"),
                               password=unquote(parts.password or ""), autocommit=True,
                               database=(parts.path or "/").lstrip("/") or None)
    except pymysql.MySQLError as exc:
        raise RivuletError(f"cannot connect to {url}: {exc}") from None

    def run(sql: str) -> Any:
        try:
            with conn.cursor() as cursor:
                cursor.execute(sql)
                return list(cursor.fetchall()) if cursor.description else cursor.rowcount
        except pymysql.MySQLError as exc:
            return RivuletError(exc.args[-1] if exc.args else str(exc))
    return run


if __name__ == "__main__":
    raise SystemExit(main())
