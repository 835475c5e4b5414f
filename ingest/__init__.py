"""Getting and parsing sources. Parsers are pure functions of bytes; ``ingest.net`` holds the only network I/O (and the cache)."""

MAX_BYTES = 20_000_000  # the largest source kb reads, from a file or from the network
