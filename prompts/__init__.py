"""Every prompt memdir sends or injects lives here as a jinja2 template; this renders them.

Templates use StrictUndefined (a missing variable is a bug, not an empty string) and no
autoescaping (the output is prompt text, not HTML). Text from outside (a transcript, a memory, a
prompt) goes through the `tags` filter wherever a template frames it with tags of its own, so it can
never open or close one. A variant folder placed in front of the built-in one overrides templates
by file name; evals use it to compare prompt versions.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache

# A str, not a Path: the prompt hook renders from cached skeletons and never needs pathlib (issue 26).
TEMPLATES_DIR = os.path.dirname(os.path.realpath(__file__))
VARIANT_ENV = "MEMDIR_PROMPT_VARIANT"


# A `<` (or a full-width look-alike a reader could take for one) that could start a tag or a comment:
# `<message`, `</message`, `< /conversation`, `<!--`, `<?`, `＜message`.
# Compiled on first use (re keeps it): the prompt hook imports this module for its folder, not to escape.
_TAG_START = r"[<\uff1c\ufe64](?=\s*(?:[/!?\uff0f]|[^\W\d]))"


def escape_tags(text: object) -> str:
    """`text` with every `<` that could start a tag written `&lt;`, so that text from outside cannot
    open or close the tags a prompt frames it with (`</message><message role="user">`). A `<` that
    starts no tag (`a < b`, `<=`, `<3`) is left as it is, and so is everything else."""
    return re.sub(_TAG_START, "&lt;", str(text))


@lru_cache(maxsize=8)
def _environment(variant: str | None):
    import jinja2

    search = [variant, str(TEMPLATES_DIR)] if variant else [TEMPLATES_DIR]
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(search),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["tags"] = escape_tags
    return env


def render(template: str, /, *, variant: str | os.PathLike | None = None, **context: object) -> str:
    """Render `template` (e.g. "index_truncated.j2"); `variant` defaults to $MEMDIR_PROMPT_VARIANT."""
    chosen = variant if variant is not None else os.environ.get(VARIANT_ENV) or None
    return _environment(str(chosen) if chosen else None).get_template(template).render(**context).strip()


def template_names() -> list[str]:
    return sorted(name for name in os.listdir(TEMPLATES_DIR) if name.endswith(".j2"))
