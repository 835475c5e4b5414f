"""Getting and parsing sources. Parsers are pure functions of bytes; ``ingest.fetch`` is the only network I/O."""
