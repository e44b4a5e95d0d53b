"""The HTTP/JSON API, its metrics and its dataflow graph pictures.

* :mod:`.app` assembles the application (``make_app``): routes, middleware, error handling;
* :mod:`.handlers` holds the endpoints (``Api``);
* :mod:`.inputs` reads and checks what a request carries (bodies, flags, keys, SQL);
* :mod:`.responses` encodes answers and errors as JSON;
* :mod:`.middleware` limits bodies, authenticates users and counts requests;
* :mod:`.serve` runs an app with uvicorn on a thread (``serve_http``);
* :mod:`.metrics` and :mod:`.graphviz` answer ``GET /metrics`` and ``GET /graph``.
"""
