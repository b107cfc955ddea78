"""Every prompt memdir sends or injects lives here as a jinja2 template; this renders them.

Templates use StrictUndefined (a missing variable is a bug, not an empty string) and no
autoescaping (the output is prompt text, not HTML). A variant folder placed in front of the
built-in one overrides templates by file name; evals use it to compare prompt versions.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

TEMPLATES_DIR = Path(__file__).resolve().parent
VARIANT_ENV = "MEMDIR_PROMPT_VARIANT"


@lru_cache(maxsize=8)
def _environment(variant: str | None):
    import jinja2

    search = [variant, str(TEMPLATES_DIR)] if variant else [str(TEMPLATES_DIR)]
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(search),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render(template: str, /, *, variant: str | Path | None = None, **context: object) -> str:
    """Render `template` (e.g. "index_truncated.j2"); `variant` defaults to $MEMDIR_PROMPT_VARIANT."""
    chosen = variant if variant is not None else os.environ.get(VARIANT_ENV) or None
    return _environment(str(chosen) if chosen else None).get_template(template).render(**context).strip()


_SLOT = re.compile("\x00([a-z_]+)\x00")


def render_slotted(
    template: str,
    /,
    *,
    slots: dict[str, str],
    cache_dir: Path | None,
    variant: str | Path | None = None,
    **context: object,
) -> str:
    """`render`, but the output skeleton is cached on disk so hot paths need not import jinja2.

    `slots` are values the template only prints (never tests): the template is rendered once with
    a marker in each slot's place, the result is cached under the template's name, a checksum of
    its source and the remaining `context`, and later calls fill the markers in with one regex pass.
    jinja2 costs ~35 ms to import, a third of the prompt hook's budget; a cache hit costs ~0.1 ms.
    """
    chosen = variant if variant is not None else os.environ.get(VARIANT_ENV) or None
    source_file = Path(chosen) / template if chosen and (Path(chosen) / template).exists() else TEMPLATES_DIR / template
    skeleton = None
    cache_file = None
    if cache_dir is not None:
        import zlib

        source = source_file.read_bytes()
        facts = ",".join(f"{k}={context[k]!r}" for k in sorted(context))
        key = f"{template}-{zlib.crc32(source):08x}-{len(source)}-{zlib.crc32(facts.encode()):08x}"
        # cache_dir is <memory>/.memdir/cache: opened from the memory folder down, never through a
        # symlink (a planted skeleton would otherwise inject text into the agent's context).
        from memdir import safefs

        cache_root, cache_file = cache_dir.parent.parent, f"{cache_dir.parent.name}/{cache_dir.name}/{key}"
        try:
            skeleton = safefs.read_text(cache_root, cache_file, 1024 * 1024)
        except OSError:
            skeleton = None
    if skeleton is None:
        markers = {name: f"\x00{name}\x00" for name in slots}
        skeleton = render(template, variant=chosen, **context, **markers)
        if cache_file is not None:
            try:
                safefs.write_text(cache_root, cache_file, skeleton, durable=False)
            except OSError:
                pass  # a read-only folder only costs the next call a render
    return _SLOT.sub(lambda m: slots.get(m.group(1), m.group(0)), skeleton)


def template_names() -> list[str]:
    return sorted(p.name for p in TEMPLATES_DIR.glob("*.j2"))
