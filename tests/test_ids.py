"""Node ids (kb.ids): every builder round-trips through split_id."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kb import ids

names = st.text(min_size=1, max_size=20)


@given(names)
def test_every_builder_round_trips(name):
    for build, prefix in ((ids.rule_id, "cr"), (ids.glossary_id, "gl"), (ids.article_id, "wiki"), (ids.card_id, "card")):
        node_id = build(name)
        assert ids.split_id(node_id) == (prefix, name)
        assert ids.id_name(node_id) == name
    assert ids.rule_number(ids.rule_id(name)) == name
    assert ids.rule_number(ids.glossary_id(name)) is None


@given(names, names)
def test_note_ids_keep_set_and_card(set_name, card):
    node_id = ids.note_id(set_name, card)
    assert ids.split_id(node_id) == ("note", f"{set_name}:{card}")


def test_predicates():
    assert ids.is_rule_id("cr:601.2f") and not ids.is_rule_id("card:x")
    assert ids.is_glossary_id("gl:唱える") and not ids.is_glossary_id("glx:y")
    assert ids.is_article_id("wiki:唱える")
    assert ids.split_id("plain") == ("", "plain")
