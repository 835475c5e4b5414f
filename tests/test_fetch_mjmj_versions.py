"""``kb fetch mjmj VERSION`` with the id ``kb versions`` prints (issue 22, item 4): 20250726.0 is the file
JPN_CR_20250725_0.txt; the names of nearby dates are tried in turn, and when none exists the error names them all.
A real HTTP server on 127.0.0.1."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from click.testing import CliRunner
from conftest import DATA

from ingest.cr_text import file_names_of_version
from ingest.net.fetch import Politeness, crawl
from kb.cli import main

FAST = Politeness(delay=0.0, max_tries=1)


class Folder:
    """A folder of files served on 127.0.0.1; every path asked for is logged."""

    def __init__(self, files: dict[str, bytes]):
        self.files, self.asked = files, []
        folder = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                folder.asked.append(self.path)
                body = folder.files.get(self.path)
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Type", "text/plain; charset=UTF-8")
                self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()
                self.wfile.write(body or b"")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def folder() -> Iterator[Folder]:
    served = Folder({"/robots.txt": b"User-agent: *\nAllow: /\n"})
    yield served
    served.server.shutdown()
    served.server.server_close()


def test_candidate_names_are_the_date_then_the_nearest_dates():
    names = file_names_of_version("20250726.0")
    assert names[:3] == ["JPN_CR_20250726_0.txt", "JPN_CR_20250725_0.txt", "JPN_CR_20250727_0.txt"]
    assert len(names) == 15 and names[-1] == "JPN_CR_20250802_0.txt"
    assert file_names_of_version("20250919.1")[0] == "JPN_CR_20250919_1.txt"
    assert file_names_of_version("20260116")[0] == "JPN_CR_20260116_0.txt"
    assert file_names_of_version("JPN_CR_20250725_0.txt") == file_names_of_version("20251399.0") == []


def test_the_id_kb_versions_shows_finds_its_file(folder, tmp_path):
    folder.files["/docs/JPN_CR_20250725_0.txt"] = (DATA / "JPN_CR_20231117_0.txt").read_bytes()
    report = crawl("mjmj", ["20250726.0"], kb_dir=tmp_path, base_url=folder.base + "docs/", politeness=FAST)
    assert report.fetched == [folder.base + "docs/JPN_CR_20250725_0.txt"] and not report.failed
    assert [p for p in folder.asked if p != "/robots.txt"] == ["/docs/JPN_CR_20250726_0.txt",
                                                                 "/docs/JPN_CR_20250725_0.txt"]


def test_no_file_of_the_version_names_every_name_tried(folder, tmp_path):
    result = CliRunner().invoke(main, ["--kb-dir", str(tmp_path), "fetch", "mjmj", "--delay", "0",
                                       "--base-url", folder.base + "docs/", "20250726.0"])
    assert result.exit_code != 0
    assert "JPN_CR_20250726_0.txt" in result.output and "JPN_CR_20250725_0.txt" in result.output
    assert "JPN_CR_20250802_0.txt" in result.output and "HTTP 404 for each of the 15 names" in result.output
    assert f"{folder.base}docs/JPN_CR_20250726_0.txt: HTTP 404" in result.output  # named by the version's own file
    assert len([p for p in folder.asked if p != "/robots.txt"]) == 15
