"""A hand-written items.json that cannot be graded from is refused in one line naming the file, the item and the fix
(a missing comma ended `memdir eval run --data DIR` in a JSONDecodeError traceback)."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(("text", "says"), [
    ("{", "not valid JSON"),
    ('{"file": "a.jsonl"}', "a JSON list of items is expected, not dict"),
    ('[{"type": "user", "text": "x", "keywords": ["x"]}]', "item 1: field 'file': Field required"),
    ('[{"file": "a.jsonl", "nothing": true}, {"file": "a.jsonl", "type": "user", "text": "x"}]',
     "item 2 (a.jsonl): give it 'type' and 'keywords'"),
    ('[{"file": "a.jsonl", "type": "user", "text": "x", "keywords": "x"}]', "item 1: field 'keywords'"),
    (b"\xff\xfe[]", "not valid JSON"),
])
def test_a_bad_items_file_is_one_clear_line(cli, tmp_path, text, says):
    data = tmp_path / "set"
    data.mkdir()
    (data / "a.jsonl").write_text("", encoding="utf-8")
    items = data / "items.json"
    if isinstance(text, bytes):
        items.write_bytes(text)
    else:
        items.write_text(text, encoding="utf-8")
    code, out, err = cli("eval", "run", "--suite", "realdata", "--engine", "offline", "--data", str(data),
                         "--out", str(tmp_path / "runs"))
    assert code == 1
    assert err.strip().splitlines() == [f"memdir eval: {items}: " + err.split(f"{items}: ", 1)[1].strip()]
    assert says in err and "Traceback" not in err


def test_the_sets_own_notes_and_a_list_of_types_are_read(tmp_path):
    from memdir.evals.items_file import read_items

    path = tmp_path / "items.json"
    path.write_text('[{"file": "a.jsonl", "type": ["user", "project"], "text": "t", "keywords": ["k"], '
                    '"quote": "q", "lang": "de"}, {"file": "b.jsonl", "nothing": true}]', encoding="utf-8")
    first, second = read_items(path)
    assert first.type == ["user", "project"] and first.keywords == ["k"] and not first.nothing
    assert second.nothing and second.file == "b.jsonl"
