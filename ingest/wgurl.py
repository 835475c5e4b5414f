"""What a Wisdom Guild rules-viewer URL names — a rule, section or chapter (``/cr/r/601.2f/``,
``/cr/cr.php?r=608.2c``), a glossary term (``/cr/glossary/唱える/``) or the viewer's index (``/cr/``) — as a pure
function of the URL, for the site (which points such links at its own pages) and the tests that walk it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qs, unquote, urlsplit

from kb import rulenum

WG_HOST = "whisper.wisdom-guild.net"
RULE, TERM, INDEX = "rule", "term", "index"
_RULE_PATH = re.compile(r"^/cr/r/([^/]+)/?$")
_TERM_PATH = re.compile(r"^/cr/glossary/([^/]+)/?$")


@dataclass(frozen=True)
class WgTarget:
    kind: str  # RULE, TERM or INDEX
    name: str  # the rule number (normalised), the term as written, or "" for the index


def wisdom_guild_target(url: str) -> WgTarget | None:
    """The rule, term or index an absolute rules-viewer URL names; None for any other URL."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or (parts.hostname or "").lower() != WG_HOST:
        return None
    path = unquote(parts.path)
    number = None
    if m := _RULE_PATH.match(path):
        number = m.group(1)
    elif path in ("/cr/cr.php", "/cr/r.php"):
        number = (parse_qs(parts.query).get("r") or [""])[0]
    if number is not None:
        normal = rulenum.normalize(number)
        return WgTarget(RULE, normal) if normal else None
    if m := _TERM_PATH.match(path):
        return WgTarget(TERM, m.group(1))
    if path in ("/cr", "/cr/", "/cr/index.php"):
        return WgTarget(INDEX, "")
    return None
