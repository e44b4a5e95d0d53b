"""``rivulet verify`` (rivulet/pipeline/verify.py; issue 4, part 4).

An agreeing database passes (full and partial views, parameterized, ranges, top-k, implicit
groups, joins); deliberately corrupted state (a reader entry, an aggregate's value, a key
lost from a full view, a stale cached answer) is detected and reported with its key;
partial views are checked on the keys they hold (a sample of them when asked) and on a
sample of keys they do not hold, read through an upquery (a wrong upquery answer is found,
also with no key held, and writes between the two reads make no false mismatch); the report
says how many of each it checked, round-trips through its dict form (the HTTP API's) and
prints the same.

Spark tests share one local[2] session (tests/spark_fixtures.py) and never skip.
"""

from __future__ import annotations

import argparse
import json
import threading
from pathlib import Path
from typing import Any

import pytest

import rivulet
from rivulet.pipeline.verify import VerifyReport, format_report, same_rows, verify
from spark_fixtures import spark_session  # noqa: F401 (the shared ``spark`` fixture)

pytestmark = pytest.mark.spark

PROGRAM = """
CREATE TABLE stories (id INT PRIMARY KEY, author INT, title VARCHAR(50), score DOUBLE);
CREATE TABLE votes (id INT PRIMARY KEY, story INT NOT NULL, user_id INT NOT NULL);
CREATE VIEW vc AS SELECT story, COUNT(*) AS n FROM votes WHERE story = ? GROUP BY story;
CREATE VIEW story_votes AS SELECT stories.id, stories.title, COUNT(votes.id) AS n
    FROM stories LEFT JOIN votes ON stories.id = votes.story WHERE stories.id = ?
    GROUP BY stories.id, stories.title;
CREATE VIEW by_author AS SELECT id, title FROM stories WHERE author = ? ORDER BY id DESC LIMIT 2;
CREATE VIEW top AS SELECT story, COUNT(*) AS n FROM votes GROUP BY story ORDER BY n DESC, story
    LIMIT 3;
CREATE VIEW recent AS SELECT id, title FROM stories WHERE author = ? AND id > ?;
CREATE VIEW avg_score AS SELECT author, AVG(score) AS a, SUM(score) AS s FROM stories
    WHERE author = ? GROUP BY author;
CREATE VIEW everything AS SELECT COUNT(*) AS n, SUM(score) AS s FROM stories;
CREATE VIEW voted_in AS SELECT story, id FROM votes WHERE user_id = ? AND story IN (?, ?)
    ORDER BY id LIMIT 3;
"""


def make_db(path: Path, *, partial: bool = True) -> rivulet.Database:
    db = rivulet.open(path, partial=partial)
    db.execute_script(PROGRAM)
    db.table("stories").insert_many(
        [(i, i % 5, f"story {i} é", i / 7 if i % 4 else None) for i in range(40)])
    db.table("votes").insert_many([(i, i * 7 % 40, i % 13) for i in range(300)])
    db.table("votes").delete("id < ?", [20])
    db.settle()
    return db


def read_some(db: rivulet.Database) -> None:
    """Fill some holes of the partial views (and read every full one)."""
    for key in (1, 2, 39, 1000):
        db.view("story_votes").lookup(key)
    db.view("by_author").lookup(3)
    db.view("recent").lookup(2, 10)
    db.view("top").lookup()
    db.view("vc").lookup(5)
    db.view("voted_in").lookup(4, 1, 2, 3)
    db.view("voted_in").lookup(1000, 5)


def check(report: VerifyReport) -> dict[str, Any]:
    """Each view's verdict and how many held keys it compared."""
    return {v.view: (v.ok, v.filled_checked) for v in report.views}


def unfilled(report: VerifyReport) -> dict[str, int]:
    return {v.view: v.unfilled_checked for v in report.views}


def test_an_agreeing_database_passes(tmp_path: Path, spark: Any) -> None:
    with make_db(tmp_path / "data") as db:
        read_some(db)
        report = verify(db, spark=spark)
        assert report.ok, format_report(report)
        checked = check(report)
        assert checked["story_votes"] == (True, 4)  # held keys only (1000: held, no rows)
        assert checked["by_author"][1] == 1 and checked["recent"][1] == 1
        assert checked["voted_in"] == (True, 2)  # the users: its reader is keyed by them
        # Keys not held, sampled from Spark's (20 at most) and one past the largest
        # (stories 0-39, authors 0-4, users 0-12): each read through an upquery.
        assert unfilled(report) == {
            "story_votes": 21, "by_author": 5, "recent": 5, "voted_in": 13, "vc": 21,
            "avg_score": 6, "everything": 1, "top": 0}  # (top's one key is held)
        assert report.lsn == report.unfilled_lsn == db.lsn
        text = format_report(report)
        assert "all views agree" in text
        assert "story_votes (partial, holds 4 keys; checked 4 filled, 21 unfilled): ok" in text
        assert db.core.built["story_votes"].state.partial
        assert len(db.view("story_votes").held_keys()) == 4 + 21  # the reads filled them


def test_full_state_agrees_everywhere(tmp_path: Path, spark: Any) -> None:
    with make_db(tmp_path / "data", partial=False) as db:
        report = verify(db, spark=spark)
        assert report.ok, format_report(report)
        checked = check(report)
        assert checked["vc"] == (True, 40) and checked["by_author"] == (True, 5)
        assert checked["story_votes"] == (True, 40)


def corrupt_entry(db: rivulet.Database, view: str, key: Any, change: Any) -> None:
    """Change a reader entry's rows behind the engine's back (and drop its cached answer)."""
    entry = db.core.built[view].state.entries[key]
    counts = dict(entry.counts)
    entry.counts.clear()
    for row, n in counts.items():
        entry.counts[change(row)] = n
    entry.result = None


def test_corrupted_reader_entries_are_reported_with_their_keys(tmp_path: Path, spark: Any) -> None:
    with make_db(tmp_path / "data", partial=False) as db:
        corrupt_entry(db, "vc", 7, lambda r: (r[0], r[1] + 1))  # an aggregate value, off by one
        corrupt_entry(db, "by_author", 2, lambda r: (r[0], "wrong"))
        lost = db.core.built["avg_score"].state.entries.pop(4)  # a key the full view lost
        assert lost.counts
        report = verify(db, spark=spark)
        assert not report.ok
        by_view = {v.view: v for v in report.views}
        vc = by_view["vc"]
        assert (vc.keys_differing, vc.keys_missing, vc.keys_extra) == (1, 0, 0)
        [m] = vc.mismatches
        assert (m.key, m.kind) == (7, "differs") and m.engine[0][1] == m.spark[0][1] + 1
        assert [m.key for m in by_view["by_author"].mismatches] == [2]
        [gone] = by_view["avg_score"].mismatches
        assert (gone.key, gone.kind, gone.engine) == (4, "missing", ())
        assert by_view["top"].ok and by_view["story_votes"].ok
        text = format_report(report)
        assert "MISMATCHES FOUND" in text and "key 7: differs" in text and "key 4: missing" in text


def test_stale_cached_answer_and_extra_key_are_detected(tmp_path: Path, spark: Any) -> None:
    with make_db(tmp_path / "data") as db:
        read_some(db)
        state = db.core.built["story_votes"].state
        entry = state.entries[2]
        entry.result = ((2, "stale", 99),)  # what a hit would now serve
        phantom = type(entry)()
        phantom.counts[(77, "ghost", 1)] = 1
        state.entries[77] = phantom  # a held key whose rows no base row explains
        report = verify(db, ["story_votes", "vc"], spark=spark)
        [sv, vc] = report.views
        assert vc.ok
        kinds = {m.key: m.kind for m in sv.mismatches}
        assert kinds == {2: "differs", 77: "extra"}  # 77: no base row explains it
        assert sv.filled_checked == 5 and sv.keys_held == 5


def test_an_in_view_keyed_by_its_equality_is_checked_on_all_held_rows(
        tmp_path: Path, spark: Any) -> None:
    """The reader of ``user_id = ? AND story IN (...)`` holds every row of a user read:
    verify compares all of them, so a wrong row of a story no read listed is found."""
    with make_db(tmp_path / "data") as db:
        db.view("voted_in").lookup(4, 1)
        entry = db.core.built["voted_in"].state.entries[4]
        row = max(entry.counts)  # some vote of user 4 (not necessarily on story 1)
        entry.counts[(row[0], row[1] + 1000, *row[2:])] = entry.counts.pop(row)
        [check_] = verify(db, ["voted_in"], spark=spark).views
        assert not check_.ok and [m.key for m in check_.mismatches] == [4]


def test_a_pair_view_keyed_by_one_value_is_checked_on_all_held_rows(
        tmp_path: Path, spark: Any) -> None:
    """``user_id = ? AND story = ?`` made over rows is kept by story (fewer rows per
    value): verify compares every row held under a story, whichever users a read asked
    for, and reports a wrong one under the story."""
    with make_db(tmp_path / "data") as db:
        db.table("votes").insert_many([(1000 + i, i % 40, 20 + i % 17) for i in range(200)])
        db.settle()  # (30 users: enough values to leave the user out of the key)
        db.execute("CREATE VIEW user_story AS SELECT id FROM votes WHERE user_id = ? AND story = ?")
        built = db.core.built["user_story"]
        assert built.listed == 0 and built.state.key_columns == built.plan.key[1:]
        db.view("user_story").lookup(4, 21)
        assert check(verify(db, ["user_story"], spark=spark)) == {"user_story": (True, 1)}
        entry = built.state.entries[21]
        row = max(entry.counts)  # some vote on story 21 (the id is the first column)
        entry.counts[(row[0] + 1000, *row[1:])] = entry.counts.pop(row)
        [check_] = verify(db, ["user_story"], spark=spark).views
        assert not check_.ok and [m.key for m in check_.mismatches] == [21]


def test_partial_views_are_checked_on_held_and_unfilled_keys(tmp_path: Path, spark: Any) -> None:
    with make_db(tmp_path / "data") as db:
        db.view("by_author").lookup(1)
        db.table("stories").insert_many([(100, 1, "new", 1.0), (101, 4, "other", 2.0)])
        db.settle()
        report = verify(db, ["by_author"], spark=spark, unfilled_sample=2)
        [check_] = report.views
        assert check_.ok and check_.partial and check_.keys_held == check_.filled_checked == 1
        assert check_.unfilled_checked == 3  # two of authors 0, 2, 3, 4, and author 5
        held = set(db.view("by_author").held_keys())
        assert 1 in held and 5 in held and len(held) == 4
        # A held key lost from the reader is a hole again: read through an upquery.
        db.evict("by_author")
        [check_] = verify(db, ["by_author"], spark=spark).views
        assert (check_.keys_held, check_.filled_checked, check_.unfilled_checked) == (0, 0, 6)
        assert check_.ok and set(db.view("by_author").held_keys()) == {0, 1, 2, 3, 4, 5}
        assert verify(db, ["by_author"], spark=spark,
                      unfilled_sample=0).views[0].unfilled_checked == 0
        with pytest.raises(ValueError, match="sample sizes"):
            verify(db, ["by_author"], spark=spark, held_sample=-1)


def test_a_partial_view_holding_nothing_is_checked_on_unfilled_keys(
        tmp_path: Path, spark: Any, monkeypatch: Any) -> None:
    """No key filled: the sample of keys it does not hold is compared, and an upquery
    that answers wrong (a base lookup losing a row) is found on those keys. A view over an
    empty table has nothing to compare, and says so."""
    with make_db(tmp_path / "data") as db:
        db.execute("CREATE TABLE empty (id INT PRIMARY KEY, a INT)")
        db.execute("CREATE VIEW nothing AS SELECT id FROM empty WHERE a = ?")
        report = verify(db, ["vc", "nothing"], spark=spark)
        assert report.ok, format_report(report)
        vc, nothing = report.views
        assert (vc.keys_held, vc.filled_checked, vc.unfilled_checked) == (0, 0, 21)
        assert nothing.checked_nothing and not vc.checked_nothing
        text = format_report(report)
        assert "vc (partial, holds 0 keys; checked 0 filled, 21 unfilled): ok" in text
        assert ("nothing (partial, holds 0 keys; checked 0 filled, 0 unfilled): nothing to "
                "check") in text
        db.evict()
        base_lookup = db.graph.base_lookup

        def lose_a_row(table: str, columns: Any, keys: list[Any]) -> Any:
            rows = base_lookup(table, columns, keys)
            return rows[1:] if table == "votes" else rows

        monkeypatch.setattr(db.graph, "base_lookup", lose_a_row)
        report = verify(db, ["vc"], spark=spark)
        [vc] = report.views
        assert vc.filled_checked == 0 and vc.unfilled_checked == 21
        # Every sampled story with votes counts one too few (the 21st has no votes).
        assert (vc.keys_differing, vc.keys_extra) == (20, 0)
        assert all(m.engine[0][1] == m.spark[0][1] - 1 and m.upquery for m in vc.mismatches)
        text = format_report(VerifyReport.from_dict(json.loads(json.dumps(report.to_dict()))))
        assert "differs (a hole, filled by verify's upquery)" in text


def test_unfilled_keys_compare_at_one_lsn_when_writes_come_between(
        tmp_path: Path, spark: Any, monkeypatch: Any) -> None:
    """A write commits after the first snapshot, before the keys not held are read: they
    are compared with a second snapshot at the LSN they were read at (with the first,
    every story's count would differ by the vote written)."""
    import rivulet.pipeline.verify as verify_module

    with make_db(tmp_path / "data") as db:
        take = verify_module.take_snapshot
        written: list[int] = []

        def then_write(*args: Any, **kwargs: Any) -> Any:
            snapshot = take(*args, **kwargs)
            if not written:
                db.table("votes").insert_many([(5000 + s, s, 1) for s in range(40)])
                written.append(db.lsn)
            return snapshot

        monkeypatch.setattr(verify_module, "take_snapshot", then_write)
        report = verify(db, ["vc"], spark=spark)
        assert report.ok, format_report(report)
        assert report.unfilled_lsn == written[0] == report.lsn + 1
        assert report.views[0].unfilled_checked == 21
        assert f"keys not held read at LSN {written[0]}" in format_report(report)


def test_verify_while_writes_continue(tmp_path: Path, spark: Any) -> None:
    with make_db(tmp_path / "data", partial=False) as db:
        stop = threading.Event()

        def write() -> None:
            i = 1000
            while not stop.is_set():
                db.table("votes").insert_many([(i, i % 40, i % 13)])
                i += 1

        writer = threading.Thread(target=write)
        writer.start()
        try:
            report = verify(db, ["vc", "top"], spark=spark)
        finally:
            stop.set()
            writer.join()
        assert report.ok, format_report(report)


def test_report_round_trips_through_its_dict(tmp_path: Path, spark: Any) -> None:
    with make_db(tmp_path / "data", partial=False) as db:
        corrupt_entry(db, "by_author", 3, lambda r: (r[0], r[1] + "!"))
        report = verify(db, ["by_author", "avg_score"], spark=spark)
        data = json.loads(json.dumps(report.to_dict()))
        assert data["ok"] is False and data["views"][0]["mismatches"][0]["key"] == 3
        assert data["views"][0]["mismatches"][0]["upquery"] is False  # (maintained state)
        again = VerifyReport.from_dict(data)
        assert format_report(again) == format_report(report)
        assert again.ok is False


def test_unknown_view_is_an_error(tmp_path: Path, spark: Any) -> None:
    with make_db(tmp_path / "data") as db:
        with pytest.raises(rivulet.RivuletError, match="unknown view 'nope'"):
            verify(db, ["nope"], spark=spark)


def test_same_rows_tolerates_float_order_not_values() -> None:
    assert same_rows([(1, 0.1 + 0.2)], [(1, 0.3)])
    assert not same_rows([(1, 0.3)], [(1, 0.31)])
    assert not same_rows([(1234567891,)], [(1234567892,)])
    assert same_rows([(1, "a"), (2, None)], [(2, None), (1, "a")])
    assert not same_rows([(1, "a")], [(1, "a"), (1, "a")])


def test_commands_verify_and_import(tmp_path: Path, spark: Any, capsys: Any) -> None:
    from rivulet.cli import pipeline as commands

    parser = argparse.ArgumentParser(prog="rivulet")
    handlers = commands.register(parser.add_subparsers(dest="command", required=True))
    data = tmp_path / "data"
    make_db(data, partial=False).close()
    csv = tmp_path / "votes.csv"
    csv.write_text("id,story,user_id\n5000,1,2\n5001,x,3\n", encoding="utf-8")
    args = parser.parse_args(["import", "--data-dir", str(data), "--table", "votes", str(csv),
                              "--no-progress"])
    assert handlers["import"](args) == commands.EXIT_REJECTED  # imported, but not all
    out = capsys.readouterr().out
    assert "imported 1 of 2 rows" in out and "row 2" in out
    csv.write_text("id,story,user_id\n5002,1,2\n5003,x,3\n", encoding="utf-8")
    args = parser.parse_args(["import", "--data-dir", str(data), "--table", "votes", str(csv),
                              "--no-progress", "--accept-rejected"])
    assert handlers["import"](args) == 0  # rejected rows accepted
    assert "imported 1 of 2 rows" in capsys.readouterr().out
    args = parser.parse_args(["import", "--data-dir", str(data), "--table", "votes", str(csv),
                              "--on-error", "fail", "--no-progress"])
    assert handlers["import"](args) == 1
    assert handlers["verify"](parser.parse_args(["verify", "--data-dir", str(data)])) == 0
    assert "all views agree" in capsys.readouterr().out
    assert handlers["verify"](parser.parse_args(["verify", "--data-dir", str(data), "vc"])) == 0


def test_cli_runs_import_and_verify(tmp_path: Path, spark: Any, capsys: Any) -> None:
    from rivulet.cli import main

    data = tmp_path / "data"
    make_db(data, partial=False).close()
    csv = tmp_path / "more.csv"
    csv.write_text("id,story,user_id\n7000,3,1\n7001,3,2\n", encoding="utf-8")
    assert main(["import", "--data-dir", str(data), "--table", "votes", str(csv),
                 "--no-progress"]) == 0
    # Opened by the command, its views are partial (the default): none holds a key.
    assert main(["verify", "--data-dir", str(data), "--unfilled-sample", "3", "vc", "top"]) == 0
    out = capsys.readouterr().out
    assert "imported 2 of 2 rows" in out and "all views agree" in out
    assert "vc (partial, holds 0 keys; checked 0 filled, 4 unfilled): ok" in out
    assert "top (partial, holds 0 keys; checked 0 filled, 1 unfilled): ok" in out
    with pytest.raises(SystemExit):
        main(["verify", "--data-dir", str(data), "--held-sample", "-1"])
    assert "0 or more" in capsys.readouterr().err
    assert main(["verify", "--server", "http://127.0.0.1:9", "--held-sample", "5"]) == 1
    assert "apply to a local verify" in capsys.readouterr().err
    assert main(["verify", "--data-dir", str(tmp_path / "nothing")]) == 1
    assert "no rivulet database" in capsys.readouterr().err


def test_verify_against_a_server_prints_its_report(tmp_path: Path, spark: Any, capsys: Any) -> None:
    """``rivulet verify --server``: POST /verify, the answer printed as a local report is
    (a stand-in server calling ``verify`` as the HTTP API does)."""
    import http.server

    with make_db(tmp_path / "data", partial=False) as db:
        corrupt_entry(db, "vc", 5, lambda r: (r[0], r[1] * 10))
        asked: list[Any] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                asked.append((self.path, body))
                payload = json.dumps(verify(db, body["views"] or None, spark=spark).to_dict())
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(payload.encode())

            def log_message(self, *args: Any) -> None:
                pass

        server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=server.serve_forever)
        thread.start()
        try:
            from rivulet.cli import main

            url = f"http://127.0.0.1:{server.server_address[1]}"
            assert main(["verify", "--server", url, "vc", "top"]) == 1
        finally:
            server.shutdown()
            thread.join()
        assert asked == [("/verify", {"views": ["vc", "top"]})]
        out = capsys.readouterr().out
        assert "MISMATCHES FOUND" in out and "key 5: differs" in out
        assert main(["verify", "--server", "http://127.0.0.1:9"]) == 1
        assert "cannot reach" in capsys.readouterr().err


def test_many_held_keys_of_a_partial_view(tmp_path: Path, spark: Any) -> None:
    """More held keys than Spark's pushed-down filter takes: they are joined instead."""
    with make_db(tmp_path / "data") as db:
        db.table("stories").insert_many([(i, i % 5, f"s{i}", None) for i in range(100, 1600)])
        db.execute("CREATE VIEW title AS SELECT id, title FROM stories WHERE id = ?")
        db.settle()
        db.view("title").lookup_many(range(100, 1600))
        db.view("title").lookup_many([(5000,), (5001,)])  # held, no rows
        corrupt_entry(db, "title", 1234, lambda r: (r[0], "changed"))
        [result] = verify(db, ["title"], spark=spark).views
        assert result.filled_checked == result.keys_held == 1502
        assert result.unfilled_checked == 21  # (the held keys left out by a join as well)
        assert [(m.key, m.kind) for m in result.mismatches] == [(1234, "differs")]
        report = verify(db, ["title"], spark=spark, held_sample=100, unfilled_sample=0)
        [result] = report.views
        assert (result.keys_held, result.filled_checked) == (1502 + 21, 100)  # (filled by verify)
        assert "checked 100 filled (a sample), 0 unfilled" in format_report(report)


def test_several_in_lists_and_range_aggregates_are_verified(
        tmp_path: Path, spark: Any) -> None:
    """A view of two IN lists is checked on its held keys (the combinations a read asked
    for, or the values of the list its reader is keyed by) and on keys it did not hold; a
    range aggregate on its held keys, each computed on Spark as its query with the key's
    values as constants (a wrong answer under one is found)."""
    with make_db(tmp_path / "data") as db:
        db.execute("CREATE VIEW pairs AS SELECT id FROM votes WHERE story IN (?, ?) "
                   "AND user_id IN (?, ?)")
        db.execute("CREATE VIEW since AS SELECT story, COUNT(*) AS n FROM votes "
                   "WHERE id >= ? GROUP BY story")
        db.view("pairs").lookup(7, 14, 1, 2)
        db.view("since").lookup(100)
        held = len(db.view("pairs").held_keys())  # (verify's reads of unheld keys fill more)
        report = verify(db, spark=spark)
        assert report.ok, format_report(report)
        assert held and check(report)["pairs"] == (True, held)
        assert check(report)["since"] == (True, 1)
        db.view("since").lookup(250)
        db.execute("CREATE VIEW window AS SELECT MAX(user_id) AS m, COUNT(*) AS n FROM votes "
                   "WHERE id > ? AND id <= ?")
        db.view("window").lookup(10, 90)
        db.view("window").lookup(400, 500)  # (no rows: MAX is NULL, COUNT 0)
        # (range parameters on two columns: each value of both bounds a key)
        db.execute("CREATE VIEW both_ AS SELECT story, COUNT(*) AS n FROM votes "
                   "WHERE id > ? AND user_id <= ? GROUP BY story")
        db.view("both_").lookup(10, 3)
        db.view("both_").lookup(200, 1)
        # (and without an aggregate: the reader holds its key's rows, the other column's
        # bounds checked at read time)
        db.execute("CREATE VIEW scored AS SELECT id FROM votes WHERE story = ? AND id > ? "
                   "AND user_id < ?")
        assert db.view("scored").lookup(7, 30, 6)
        assert check(verify(db, ["since", "window", "both_", "scored"], spark=spark)) == {
            "since": (True, 2), "window": (True, 2), "both_": (True, 2), "scored": (True, 1)}
        state = db.core.built["window"].state
        [key] = [k for k in state.entries if k == (10, 90)]
        [row] = state.entries[key].counts  # (MAX(user_id), COUNT(*), the two bounds)
        assert row[1] > 0
        corrupt_entry(db, "window", key, lambda r: (r[0], r[1] + 1, *r[2:]))
        report = verify(db, ["window"], spark=spark)
        [mismatch] = {v.view: v for v in report.views}["window"].mismatches
        assert (mismatch.key, mismatch.kind) == (key, "differs")


def test_a_cut_inside_another_query_is_verified(tmp_path: Path, spark: Any) -> None:
    """A LIMIT [OFFSET] in FROM keeps the rows ranked past the OFFSET (a top-k's ``skip``):
    Spark cuts them with the same order (a global cut and one per key), and a wrong row
    under a key is found."""
    with make_db(tmp_path / "data") as db:
        db.execute("CREATE VIEW page AS SELECT p.id, p.story FROM (SELECT id, story FROM votes "
                   "ORDER BY id DESC LIMIT 6 OFFSET 3) AS p")
        db.execute("CREATE VIEW page_of AS SELECT p.id FROM (SELECT id, story FROM votes "
                   "ORDER BY user_id, id LIMIT 40 OFFSET 5) AS p WHERE p.story = ?")
        db.view("page").lookup()
        for story in (3, 7, 11):
            db.view("page_of").lookup(story)
        report = verify(db, ["page", "page_of"], spark=spark)
        assert report.ok, format_report(report)
        assert sorted(db.view("page").lookup()) == [(i, i * 7 % 40) for i in range(291, 297)]
        [key] = [k for k in db.core.built["page_of"].state.entries if k == 7]
        corrupt_entry(db, "page_of", key, lambda r: (r[0] + 1000, *r[1:]))
        [mismatch] = {v.view: v for v in verify(db, ["page_of"], spark=spark).views}[
            "page_of"].mismatches
        assert (mismatch.key, mismatch.kind) == (7, "differs")
