"""Rules versions over time: :mod:`kb.versions.catalog` (which versions are stored, names → versions),
:mod:`kb.versions.diff` (what changed between two versions), :mod:`kb.versions.history` (one rule across every
version) and :mod:`kb.versions.update` (fetch, ingest, compare and rebuild, all or nothing).
"""
