"""The HTTP/JSON API, its metrics and its dataflow graph pictures."""
