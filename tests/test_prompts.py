from __future__ import annotations

import pytest

from memdir import prompts
from memdir.prompts import render, template_names
from memdir.template_cache import render_slotted


def test_every_template_renders_strictly():
    assert {"recall_system.j2", "recall_user.j2", "recall_memory.j2", "index_truncated.j2"} <= set(template_names())
    with pytest.raises(Exception, match="undefined"):
        render("recall_user.j2")  # StrictUndefined: a missing variable is an error, not ""


def _context(days=3, truncated=False):
    return dict(days=days, trimmed=truncated, has_content=True)


@pytest.mark.parametrize("days, truncated", [(0, False), (1, True), (47, False), (47, True)])
def test_slotted_render_equals_a_fresh_render(tmp_path, days, truncated):
    slots = {"path": "/m/x.md", "content": "body with \x00content\x00 and {{ braces }}", "description": "d",
             "more": "3 more lines", "type": "user"}
    fresh = render("recall_memory.j2", **slots, **_context(days, truncated))
    first = render_slotted("recall_memory.j2", slots=slots, cache_dir=tmp_path, **_context(days, truncated))
    cached = render_slotted("recall_memory.j2", slots=slots, cache_dir=tmp_path, **_context(days, truncated))
    assert first == fresh == cached
    assert len(list(tmp_path.iterdir())) == 1


def test_slotted_cache_follows_template_changes(tmp_path):
    variant = tmp_path / "variant"
    variant.mkdir()
    (variant / "recall_memory.j2").write_text("v1 {{ path }} {{ days }}")
    slots = {"path": "/p", "content": "c"}
    cache = tmp_path / "cache"
    assert render_slotted("recall_memory.j2", slots=slots, cache_dir=cache, variant=variant, **_context()) == "v1 /p 3"
    (variant / "recall_memory.j2").write_text("v2 changed {{ path }}")
    prompts._environment.cache_clear()
    assert render_slotted("recall_memory.j2", slots=slots, cache_dir=cache, variant=variant, **_context()) == "v2 changed /p"


def test_variant_folder_overrides_by_name(tmp_path):
    (tmp_path / "recall_system.j2").write_text("pick {{ max_selected }}")
    assert render("recall_system.j2", variant=tmp_path, max_selected=3) == "pick 3"
    assert "at most 3" in render("recall_system.j2", max_selected=3)
