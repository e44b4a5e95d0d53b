"""The command line: the demo (the README's main job) and explain."""

from __future__ import annotations

from pathlib import Path

import pytest

import rivulet
from rivulet.cli import explain, main, news_program


def test_demo_loads_the_news_program_and_reports_its_workload(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["demo", "--data-dir", str(tmp_path), "--seconds", "0.5", "--stories", "500",
            "--votes", "5000"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "installed the news program" in out
    assert "loaded 500 stories and 5,000 votes" in out
    assert "front page (top 5)" in out
    # A second run reuses the data directory: no reinstall, no reload.
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "installed" not in out and "loaded" not in out


def test_demo_views_agree_with_the_rows_it_wrote(tmp_path: Path) -> None:
    main(["demo", "--data-dir", str(tmp_path), "--seconds", "0.2", "--stories", "300",
          "--votes", "2000"])
    with rivulet.open(tmp_path) as db:
        votes = db.query("SELECT story_id, COUNT(*) FROM votes GROUP BY story_id")
        counts = dict(votes)
        for story in range(300):
            (row,) = db.view("StoriesWithVC").lookup(story)
            assert row[4] == counts.get(story, 0)
        front = db.view("FrontPage").lookup()
        assert [r[2] for r in front] == sorted(counts.values(), reverse=True)[:30]


def test_explain_shows_shared_nodes(tmp_path: Path) -> None:
    with rivulet.open(tmp_path) as db:
        db.execute_script(news_program())
        text = explain(db, "FrontPage")
    assert text.startswith("view FrontPage")
    assert "⟕" in text  # stories LEFT JOIN the per-story vote counts
    assert "shared by" in text
    # the vote counts (eager aggregation, rivulet/plan/eager.py) serve four views
    counts = next(line for line in text.splitlines() if "γ" in line)
    assert "views: FrontPage, Karma, StoriesWithVC, StoryVotes)" in counts, counts


def test_errors_are_reported_not_raised(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "nope", "--data-dir", str(tmp_path)]) == 1
    assert "unknown view 'nope'" in capsys.readouterr().err


def test_serve_passes_spark_settings_to_the_session(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    opened: dict = {}

    class Opened(Exception):
        pass

    def fake_open(path: Path, **options: object) -> None:
        opened.update(options)
        raise Opened

    monkeypatch.setattr(rivulet, "open", fake_open)
    with pytest.raises(Opened):
        main(["serve", "--data-dir", str(tmp_path), "--pipeline", "spark",
              "--spark-master", "local[1]",
              "--spark-conf", "spark.driver.extraJavaOptions=-XX:TieredStopAtLevel=1",
              "--spark-conf", "spark.sql.files.maxPartitionBytes=8m"])
    assert opened["spark"].master == "local[1]"
    assert opened["spark"].extra == {"spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1",
                                     "spark.sql.files.maxPartitionBytes": "8m"}
    assert opened["spark"].conf()["spark.driver.extraJavaOptions"] == "-XX:TieredStopAtLevel=1"


def test_serve_refuses_a_spark_setting_without_a_value(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["serve", "--spark-conf", "spark.sql.shuffle.partitions"])
    assert exit_.value.code == 2
    assert "expected spark.KEY=VALUE" in capsys.readouterr().err
