"""Where Spark's shared files go (rivulet/spark/storage.py), the zip of rivulet's code
(rivulet/spark/shipping.py), and a standalone cluster that cannot start for want of Java
(rivulet/spark/cluster.py): no Spark needed. That executors import the zip, and that
bootstrap, verify and import use the shared directory on a cluster, is
tests/test_spark_cluster.py."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from rivulet.pipeline.streaming.checkpoint import _SEGMENT_PATH
from rivulet.spark import SparkConfig
from rivulet.spark.cluster import ClusterError, StandaloneCluster
from rivulet.spark.shipping import PACKAGE_DIR, code_zip, package_files
from rivulet.spark.storage import (
    SHARED_DIR_ENV,
    STREAM_AREA_FILE,
    database_area,
    scratch_parent,
    shared_dir,
    stream_area,
)


def test_without_a_shared_directory_paths_are_one_machines(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SHARED_DIR_ENV, raising=False)
    config = SparkConfig(master="local[2]")
    data = tmp_path / "data"
    assert shared_dir(config) is None
    assert database_area(data, config) == data.resolve()
    assert scratch_parent(data, config) is None
    assert stream_area(data, config) == data / "stream"
    assert not (data / "stream").exists()  # nothing written for the default layout


def test_a_shared_directory_from_the_config_or_the_environment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared, other = tmp_path / "shared", tmp_path / "other"
    monkeypatch.setenv(SHARED_DIR_ENV, str(other))
    assert shared_dir(SparkConfig(master="local[2]")) == other
    config = SparkConfig(master="spark://127.0.0.1:7077", shared_dir=str(shared))
    assert shared_dir(config) == shared  # the config wins over the environment
    one, two = tmp_path / "a" / "data", tmp_path / "b" / "data"
    area_one, area_two = database_area(one, config), database_area(two, config)
    assert area_one.parent == shared and area_one.name.startswith("data-")
    assert area_one != area_two and area_one.is_dir()  # same name, different databases
    assert database_area(one, config) == area_one
    assert scratch_parent(one, config) == area_one


def test_a_streams_shared_area_is_new_when_its_local_directory_is(
        tmp_path: Path) -> None:
    config = SparkConfig(master="spark://127.0.0.1:7077", shared_dir=str(tmp_path / "shared"))
    data = tmp_path / "data"
    area = stream_area(data, config)
    assert area.parent == database_area(data, config) and area.is_dir()
    assert stream_area(data, config) == area  # kept in <data>/stream/shared-area
    (data / "stream" / STREAM_AREA_FILE).unlink()  # as after a restore (no stream/)
    assert stream_area(data, config) != area  # never the old checkpoints
    segment = f"{area}/log/votes/000000000001-000000000009.parquet"
    assert _SEGMENT_PATH.search(segment).group(1) == "000000000009"


def test_the_code_zip_holds_the_package_and_is_named_by_its_content(tmp_path: Path) -> None:
    first = code_zip(tmp_path)
    assert code_zip(tmp_path) == first  # cached
    with zipfile.ZipFile(first) as z:
        names = set(z.namelist())
    assert "rivulet/__init__.py" in names and "rivulet/spark/shipping.py" in names
    assert "rivulet/examples/news.sql" in names
    assert not any("__pycache__" in n for n in names)
    assert len(names) == len(package_files(PACKAGE_DIR))
    again = code_zip(tmp_path / "elsewhere")
    assert again.name == first.name and again.read_bytes() == first.read_bytes()


def test_a_cluster_without_java_fails_clearly(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-java"))
    cluster = StandaloneCluster(tmp_path / "logs")
    with pytest.raises(ClusterError, match="needs Java"):
        cluster.start()
    assert not cluster.logs()  # nothing was started
