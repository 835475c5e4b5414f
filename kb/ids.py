"""Node ids: the one module that builds and takes apart a node's id (every other module calls these functions).

An id is ``<prefix>:<name>`` and is stable across versions, so that versions can be compared:

| prefix | nodes | name |
| --- | --- | --- |
| ``cr`` | chapters, sections, rules, subrules | the rule number: ``cr:6``, ``cr:601``, ``cr:601.2f`` |
| ``gl`` | glossary entries | the term as the glossary writes it: ``gl:唱える``, ``gl:Cast`` |
| ``wiki`` | MTG Wiki articles | the article title: ``wiki:唱える`` |
| ``note`` | release notes | ``<set>:<card>``: ``note:ダスクモーン:…`` |
| ``card`` | card entities | the English name where a source gives one, else the Japanese: ``card:Dryad Arbor`` |

A node's key in the store is (version, lang, id) (:class:`kb.store.NodeKey`).
"""

from __future__ import annotations

RULE_PREFIX = "cr"
GLOSSARY_PREFIX = "gl"
ARTICLE_PREFIX = "wiki"
NOTE_PREFIX = "note"
CARD_PREFIX = "card"
PREFIXES = (RULE_PREFIX, GLOSSARY_PREFIX, ARTICLE_PREFIX, NOTE_PREFIX, CARD_PREFIX)


def rule_id(number: str) -> str:
    """``601.2f`` → ``cr:601.2f`` (chapters and sections too: ``cr:6``, ``cr:601``)."""
    return f"{RULE_PREFIX}:{number}"


def glossary_id(term: str) -> str:
    return f"{GLOSSARY_PREFIX}:{term}"


def article_id(title: str) -> str:
    return f"{ARTICLE_PREFIX}:{title}"


def note_id(set_name: str, card: str) -> str:
    return f"{NOTE_PREFIX}:{set_name}:{card}"


def card_id(name: str) -> str:
    return f"{CARD_PREFIX}:{name}"


def split_id(node_id: str) -> tuple[str, str]:
    """``cr:601.2f`` → (``cr``, ``601.2f``); an id without a prefix → ("", the id)."""
    prefix, sep, name = node_id.partition(":")
    return (prefix, name) if sep else ("", node_id)


def id_name(node_id: str) -> str:
    """What follows the prefix: the rule number, term, title, ``<set>:<card>`` or card name."""
    return split_id(node_id)[1]


def rule_number(node_id: str) -> str | None:
    """The rule number of a ``cr:`` id; None for any other id."""
    prefix, name = split_id(node_id)
    return name if prefix == RULE_PREFIX else None


def is_rule_id(node_id: str) -> bool:
    return node_id.startswith(RULE_PREFIX + ":")


def is_glossary_id(node_id: str) -> bool:
    return node_id.startswith(GLOSSARY_PREFIX + ":")


def is_article_id(node_id: str) -> bool:
    return node_id.startswith(ARTICLE_PREFIX + ":")
