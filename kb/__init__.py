"""kb — the Japanese MTG rules knowledge base.

Pipeline stages, one module each: ``ingest`` (parse sources into nodes), ``kb.link.resolve`` (resolve
references across everything stored), ``kb.search`` (index), ``kb.site`` (render).
"""

__version__ = "0.1.0"
