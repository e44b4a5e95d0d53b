"""The dataflow on Spark Structured Streaming (``pipeline="spark"``).

* :mod:`.log` ships the write log into immutable Parquet segments of signed deltas, which
  Spark reads with its own Parquet file source;
* :mod:`.plan` turns a view plan into a query over signed deltas;
* :mod:`.keyed` holds the operators that need keyed state (MIN/MAX, top-k, DISTINCT, LEFT joins);
* :mod:`.sink` stores each view's rows and last applied batch, so batches apply once;
* :mod:`.view` is one view's stream: its query, its reader, each batch applied once;
* :mod:`.checkpoint` reads from Spark's checkpoint where a batch leaves a view in the log;
* :mod:`.settings` holds the settings (:class:`StreamSettings`);
* :mod:`.pipeline` runs one stream per view with the shipper and watches them;
* :mod:`.database` is the database that uses them.
"""

from rivulet.pipeline.streaming.database import StreamingDatabase
from rivulet.pipeline.streaming.log import StreamingError
from rivulet.pipeline.streaming.settings import StreamSettings

__all__ = ["StreamSettings", "StreamingDatabase", "StreamingError"]
