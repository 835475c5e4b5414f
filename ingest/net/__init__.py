"""The network and the cache, apart from the parsers: :mod:`ingest.net.sites` (what a crawl of each site fetches),
:mod:`ingest.net.fetch` (the only network I/O) and :mod:`ingest.net.cache` (the responses, kept under the kb folder)."""
