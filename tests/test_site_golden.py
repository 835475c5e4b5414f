"""Golden files: the site built from a small hand-made corpus (tests/fixtures/site/corpus.json: a Japanese CR, the
English CR of the same effective date, an MTG Wiki article and a card) must match tests/golden/site/ byte for byte.

Regenerate after an intended change, then review the diff:

    KB_UPDATE_GOLDEN=1 .venv/bin/pytest tests/test_site_golden.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kb.link.resolve import link
from kb.model import Document, Node, Ref
from kb.site import build_site
from kb.store import Store

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "fixtures" / "site" / "corpus.json"
GOLDEN = HERE / "golden" / "site"
PAGES = ["index.html", "cr/6.html", "cr/601.html", "cr/601.2f.html", "glossary/index.html", "glossary/唱える.html",
         "glossary/abandon.html", "glossary/_abandon.html", "wiki/唱える.html", "cards/boom-bust~e7bf315e.html",
         "cards/index.html", "sitemap.xml",
         "search/meta.js"]


def load_corpus(store: Store) -> None:
    """Store the fixture documents; each ref's offsets are where its text first occurs in the node text."""
    data = json.loads(CORPUS.read_text(encoding="utf-8"))
    with store.transaction():
        for doc in data["documents"]:
            nodes = []
            for order, n in enumerate(doc["nodes"]):
                text = n.get("text", "")
                refs = tuple(Ref(kind, target, surface, text.find(surface), text.find(surface) + len(surface))
                             for kind, target, surface in n.get("refs", []))
                nodes.append(Node(id=n["id"], kind=n["kind"], lang=doc["lang"], version=doc["version"], text=text,
                                  number=n.get("number"), title=n.get("title"), parent=n.get("parent"), order=order,
                                  examples=tuple(n.get("examples", [])), refs=refs, english=n.get("english"),
                                  html=n.get("html")))
            store.put_document(Document(source=doc["source"], kind=doc["kind"], lang=doc["lang"], nodes=tuple(nodes),
                                        version=doc["version"], effective_date=doc.get("effective_date"),
                                        content_hash=doc["source"], title=doc.get("title")))
        link(store)


@pytest.fixture(scope="module")
def golden_site(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("golden")
    with Store.open(base / "kb") as store:
        load_corpus(store)
        report = build_site(store, base / "site")
    assert report.broken == []
    assert report.unresolved == ["601.2 [ja] refers to rule 999.9"]
    return base / "site"


@pytest.mark.parametrize("page", PAGES)
def test_page_matches_golden_file(golden_site, page):
    built = (golden_site / page).read_text(encoding="utf-8")
    golden = GOLDEN / page
    if os.environ.get("KB_UPDATE_GOLDEN") == "1":
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(built, encoding="utf-8")
    assert golden.is_file(), f"{golden} missing: run KB_UPDATE_GOLDEN=1 pytest {Path(__file__).name}"
    assert built == golden.read_text(encoding="utf-8")


def test_golden_corpus_behaviour(golden_site):
    section = (golden_site / "cr" / "601.html").read_text(encoding="utf-8")
    assert 'id="601.2f"' in section and 'lang="en"' in section
    assert '<span class="unresolved" title="未収録">999.9</span>' in section
    article = (golden_site / "wiki" / "唱える.html").read_text(encoding="utf-8")
    assert "https://mtgwiki.com/wiki/%E3%82%AD" in article or "https://mtgwiki.com/wiki/キーワード処理" in article
    assert "<img" not in article and "x.png" not in article
    assert 'href="../wiki/%E5%94%B1%E3%81%88%E3%82%8B.html"' in article
