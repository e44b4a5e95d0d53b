"""The ``rivulet import`` and ``rivulet verify`` commands (wired into rivulet/cli/).

:func:`register` adds both to the CLI's subparsers and returns their handlers; each
handler takes the parsed arguments and returns the exit status: 0 when the import
committed (rejected rows are reported, not an error, unless ``--on-error fail``) or when
every verified view agreed; 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

Handler = Callable[[argparse.Namespace], int]


def register(subparsers: Any) -> dict[str, Handler]:
    """Add ``import`` and ``verify`` to ``subparsers``; returns {command: handler}."""
    _add_import(subparsers)
    _add_verify(subparsers)
    return {"import": run_import, "verify": run_verify}


#: ``rivulet import``'s exit status when it imported some rows and rejected others.
EXIT_REJECTED = 3


def _add_import(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "import", help="load CSV, Parquet, JSON lines or a JDBC source into a table (on Spark)",
        description="Load rows into a base table through Spark. Every row is checked as a "
                    "normal write is (types, ranges, NOT NULL, lengths, duplicate keys); bad "
                    "rows are skipped and reported with their row number, or fail the whole "
                    "import with --on-error fail. The import is one transaction: nothing is "
                    "half imported.")
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="files, directories or globs (in this order); none with --jdbc-url")
    p.add_argument("--data-dir", default="data", help="database directory (default: ./data)")
    p.add_argument("--table", required=True, help="the base table to load")
    p.add_argument("--format", choices=("csv", "parquet", "json"), default="csv",
                   help="file format (default: csv; json means JSON lines)")
    p.add_argument("--no-header", action="store_true",
                   help="CSV files have no header line (columns in table order)")
    p.add_argument("--on-error", choices=("reject", "fail"), default="reject",
                   help="skip and report bad rows (default), or import nothing if any is bad")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="a Spark reader option, e.g. sep=';' or nullValue=NULL (repeatable)")
    p.add_argument("--jdbc-url", help="read from JDBC instead, e.g. jdbc:postgresql://h/db")
    p.add_argument("--jdbc-table", help="the JDBC source table")
    p.add_argument("--jdbc-query", help="or a query to read from the JDBC source")
    p.add_argument("--jdbc-user")
    p.add_argument("--jdbc-password")
    p.add_argument("--spark-master", help="Spark master URL (default: local[*])")
    p.add_argument("--max-errors", type=int, default=20, help="rejected rows to list")
    p.add_argument("--accept-rejected", action="store_true",
                   help=f"exit 0 when rows were rejected (default: exit {EXIT_REJECTED})")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def _add_verify(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "verify", help="recompute views on Spark and diff them with what the engine serves",
        description="Recompute every view (or those named) on Spark from a snapshot and compare "
                    "with the engine at the same LSN: full views entirely, partial views on "
                    "the keys they hold (a sample of them when many) and on a sample of keys "
                    "they do not hold, read through the engine. Exit status 0 if all agree, "
                    "1 if not.")
    p.add_argument("views", nargs="*", metavar="VIEW", help="views to check (default: all)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--data-dir", default=None, help="a database directory (default: ./data)")
    where.add_argument("--server", metavar="URL",
                       help="a running server's HTTP API, e.g. http://127.0.0.1:8080")
    p.add_argument("--spark-master", help="Spark master URL (default: local[*])")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--held-sample", type=_count, default=None, metavar="N",
                   help="held keys of a partial view compared at most (default: "
                        "verify.HELD_SAMPLE, 10000; a local verify only)")
    p.add_argument("--unfilled-sample", type=_count, default=None, metavar="N",
                   help="keys with rows a partial view does not hold compared at most, beside "
                        "one without rows (default: verify.UNFILLED_SAMPLE, 20; 0: none; a "
                        "local verify only)")


def _count(text: str) -> int:
    """A sample size: a whole number, 0 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of keys, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number of keys, 0 or more, got {value}")
    return value


# --------------------------------------------------------------------------- handlers


def run_import(args: argparse.Namespace) -> int:
    import rivulet
    from rivulet.errors import RivuletError
    from rivulet.pipeline.importer import import_files, import_jdbc
    from rivulet.spark.session import SparkConfig

    options = dict(_option(o) for o in args.option)
    try:
        if bool(args.jdbc_url) == bool(args.files):
            raise RivuletError("give FILE arguments or --jdbc-url, not both (nor neither)")
        spark = SparkConfig(master=args.spark_master) if args.spark_master else None
        with rivulet.open(args.data_dir, spark=spark) as db:  # (before Spark: it may be held)
            _start_spark(args.spark_master)
            common = {"on_error": args.on_error, "progress": not args.no_progress,
                      "options": options, "max_errors": args.max_errors}
            if args.jdbc_url:
                result = import_jdbc(db, args.table, args.jdbc_url, dbtable=args.jdbc_table,
                                     query=args.jdbc_query, user=args.jdbc_user,
                                     password=args.jdbc_password, **common)
            else:
                result = import_files(db, args.table, args.files, format=args.format,
                                      header=not args.no_header, **common)
    except RivuletError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(result.summary())
    return EXIT_REJECTED if result.rows_rejected and not args.accept_rejected else 0


def _option(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise SystemExit(f"error: --option takes KEY=VALUE, got {text!r}")
    return key, value


def run_verify(args: argparse.Namespace) -> int:
    from rivulet.errors import RivuletError
    from rivulet.pipeline.verify import VerifyReport, format_report

    try:
        if args.server:
            if args.held_sample is not None or args.unfilled_sample is not None:
                raise RivuletError("--held-sample and --unfilled-sample apply to a local "
                                   "verify; a server verifies with its defaults")
            report = VerifyReport.from_dict(_remote_verify(args.server, args.views))
        else:
            report = _local_verify(args.data_dir or "data", args.views, args.spark_master,
                                   args.held_sample, args.unfilled_sample)
    except RivuletError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(report.to_dict(), indent=1) if args.json else format_report(report))
    return 0 if report.ok else 1


def _local_verify(data_dir: str, views: list[str], master: str | None,
                  held_sample: int | None, unfilled_sample: int | None) -> Any:
    from pathlib import Path

    import rivulet
    from rivulet.errors import RivuletError
    from rivulet.pipeline.verify import HELD_SAMPLE, UNFILLED_SAMPLE, verify

    if not (Path(data_dir) / "rivulet.db").is_file():
        raise RivuletError(f"no rivulet database in {data_dir}")
    spark = _start_spark(master)
    with rivulet.open(data_dir) as db:
        db.settle()
        return verify(db, views or None, spark=spark,
                      held_sample=HELD_SAMPLE if held_sample is None else held_sample,
                      unfilled_sample=UNFILLED_SAMPLE if unfilled_sample is None
                      else unfilled_sample)


def _remote_verify(server: str, views: list[str]) -> dict[str, Any]:
    """``POST <server>/verify`` with ``{"views": [...]}``; the answer is a report's dict."""
    from rivulet.errors import RivuletError

    body = json.dumps({"views": views}).encode()
    request = urllib.request.Request(server.rstrip("/") + "/verify", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=3600) as response:  # noqa: S310
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode(errors="replace")[:500]
        raise RivuletError(f"{server}: verify failed ({exc.code}): {detail}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise RivuletError(f"cannot reach {server}: {exc}") from None


def _start_spark(master: str | None) -> Any:
    from rivulet.spark.session import SparkConfig, get_session

    return get_session(SparkConfig(master=master) if master else None)


__all__ = ["register", "run_import", "run_verify"]
