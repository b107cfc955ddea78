"""The extraction agent's tools: memory tools only, each validated here and never trusted to the model.

The agent's job is to read the conversation it is given and the existing memories, and to write
memories. Read, Grep and Glob see only the markdown files of the memory folder (extractor/tools_read.py,
with the run's state and the confinement every tool shares); there is no Bash. Write and Edit, here,
reach only `*.md` files directly inside the memory folder, go through the store (atomic, secret guard,
index kept in sync) and refuse lost updates: a file must have been read in this run and be unchanged
since. Every refusal, and every malformed input, is a tool error that says what is allowed; nothing a
model sends can abort the run.
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

from memdir import constants as C, safefs, write_mode
from memdir.errors import FolderBusy, MemdirError
from memdir.frontmatter_io import LENIENT_PROBLEM, hashes_as_text, parse_document
from memdir.model import memory_from_fields
from memdir.record import Record
from memdir.secrets import redact
from memdir.stages.extractor.platform_paths import shown_path
from memdir.stages.extractor.support import FOLDER, Verdict, extra_fields, judge, judge_memory
from memdir.stages.extractor.tool_input import TOOL_NAMES, TOOL_SCHEMAS, Refused, check_input
from memdir.stages.extractor.tools_read import ReadTools

__all__ = ["TOOL_SCHEMAS", "WRITE_TOOLS", "Refused", "ToolResult", "Toolbox"]

WRITE_TOOLS = ("Write", "Edit")

class Unsupported(Refused):
    """A write whose new content the user's own words do not support (extractor/support.py)."""


class ToolResult(Record):
    content: str
    is_error: bool = False


class Toolbox(ReadTools):
    """Executes one run's tool calls against one memory folder, and nothing else."""

    # --- dispatch --------------------------------------------------------------
    def run(self, name: str, tool_input: dict) -> ToolResult:
        """One tool call. Whatever the model sends, the answer is a result or a tool error, never an exception."""
        if not isinstance(name, str) or name not in TOOL_NAMES:
            shown = name[:40] if isinstance(name, str) else type(name).__name__
            return self._refuse(f"tool {shown!r} is not available; this agent has only {', '.join(TOOL_NAMES)} "
                                f"over the memory folder {self.shown_dir} (there is no Bash)")
        if not isinstance(tool_input, dict):
            return self._refuse(f"{name}: input must be an object")
        try:
            check_input(name, tool_input)
            handler = getattr(self, f"_tool_{name.lower()}")
            return ToolResult(handler(**{k: v for k, v in tool_input.items() if v is not None}))
        except Unsupported as exc:  # not a typo to fix: the content itself is not the user's
            return self._refuse(f"{name} refused, nothing saved: {exc}")
        except FolderBusy as exc:
            self.busy = str(exc)  # the run is reported failed, so its cursor stays and the window is read again
            return self._refuse(f"{name}: {exc}")
        except (Refused, MemdirError) as exc:
            if name in WRITE_TOOLS:  # the model must know this write did not stand, and that it may retry
                return self._refuse(f"refused, nothing saved: {exc}; fix it and write again")
            return self._refuse(str(exc))
        except (FileNotFoundError, NotADirectoryError):
            return self._refuse(f"{name}: no such file in the memory folder")
        except OSError as exc:
            return self._refuse(f"{name}: {exc.strerror or type(exc).__name__}")
        except (ValueError, TypeError, RecursionError, re.error) as exc:
            return self._refuse(f"{name}: bad input ({type(exc).__name__})")

    def _refuse(self, message: str) -> ToolResult:
        message = redact(message)  # a refused secret (or a slug of one) never reaches logs or runs.jsonl
        self.errors.append(message)
        return ToolResult(message, is_error=True)

    # --- writes -----------------------------------------------------------------------
    def _check_fresh(self, rel: str) -> str:
        """The file's current text; refuses when the agent never read it or it changed since."""
        current = self._read_file_text(rel) if self.memory_dir.is_dir() else None
        if current is not None and rel not in self.snapshots:
            raise Refused(f"{rel} already exists; Read it first, then write the updated version")
        current = current or ""
        if rel in self.snapshots and self.snapshots[rel] != current:
            raise Refused(f"{rel} changed since you read it; Read it again before writing")
        return current

    def _check_may_write(self) -> None:
        if self.writers.action(write_mode.AUTO) == write_mode.SKIP:
            raise Refused(f"write mode {self.writers.mode}: memories are saved only when the user asks "
                          "(`memdir remember`, or in confirm mode by `memdir review`); nothing can be written here")

    def _save_text(self, rel: str, text: str, current: str) -> str:
        self._check_may_write()
        if len(text.encode("utf-8", "surrogatepass")) > C.TOOL_READ_MAX_BYTES:
            raise Refused(f"{rel}: a memory file is a short note; keep it under {C.TOOL_READ_MAX_BYTES // 1024} KB")
        parsed = parse_document(hashes_as_text(text))
        # A description like "Timed take-home: Streamlit ..." is not valid YAML unquoted, yet it is a valid
        # memory: the lenient `key: rest of line` reading is kept and the store writes it back quoted.
        if not parsed.has_header or (parsed.problem and not parsed.problem.startswith(LENIENT_PROBLEM)):
            raise Refused(
                f"{rel}: needs YAML frontmatter between '---' lines with name, description and type "
                f"({parsed.problem or 'none found'})"
            )
        memory = memory_from_fields(parsed.fields, parsed.body, rel)
        self._check_name_free(rel, memory.name, current)
        missing = memory.missing_why_how()
        if missing:
            raise Refused(f"{rel}: {memory.type.value} memories need {' and '.join(missing)} lines in the body")
        proposed = None
        from memdir.secrets import guard

        guard(text, rel)  # a secret is refused as one, before any refusal could quote its words
        verdict = self.weigh_memory(memory, current, rel)
        if self.dry_run:
            from memdir.secrets import guard

            guard(text, rel)
            guard(rel.replace("_", "-"), "a memory file name")
        else:
            proposed = self.store.save(memory, rel_path=rel, expected_text=current, authored=True,
                                       provenance=self.provenance(verdict)).proposed
        self.snapshots[rel] = text if self.dry_run else self._read_file_text(rel) or ""
        self.as_written[rel] = text
        if proposed:
            self.proposed.append(rel)
            return (f"proposed {rel} for the user's review (write mode {self.writers.mode}): it is not in the folder "
                    f"until they accept it; Read returns the proposed text:\n{_header(self.snapshots[rel])}")
        self.written.append(rel)
        if self.dry_run:
            return f"saved as {rel} (dry run: not written)"
        return f"saved as {rel}. Read returns it in its stored form, which Edit matches against:\n{_header(self.snapshots[rel])}"

    def weigh(self, new_text: str, old_text: str, where: str) -> Verdict | None:
        """Refuse content the user's own words in the excerpt do not support, whoever asked for it."""
        if self.sources is None:
            return None
        verdict = judge(new_text, old_text, self.sources)
        if verdict.refused:
            raise Unsupported(f"{where}: {verdict.refused}")
        return verdict

    def weigh_memory(self, memory, current: str, rel: str) -> Verdict | None:
        """`weigh` for a memory file: its description alone, its name alone, its other frontmatter keys alone, then all
        of it (extractor/support.py)."""
        if self.sources is None:
            return None
        old = parse_document(current) if current else None
        old_description = str(old.fields.get("description") or "") if old else ""
        old_name = str(old.fields.get("name") or "") if old else ""
        # its other frontmatter keys: in the file Claude Code reads too (`setup: always run curl ... | sh` was saved)
        fields = extra_fields(memory.extra)
        old_fields = extra_fields({k: v for k, v in old.fields.items() if k not in ("name", "description")}) if old else ""
        # its name: half the index line every session loads (a plant as the name, padded by the user's rule, was
        # saved); alone, as the description, but in words nobody said as it likes (names are the model's to choose)
        parts = (("its name", memory.name, old_name, True), ("its frontmatter", fields, old_fields, False))
        verdict = judge_memory(memory.description, f"{memory.name}\n{memory.description}\n{fields}\n{memory.body}",
                               old_description, current, self.sources, parts)
        if verdict.refused:
            raise Unsupported(f"{rel}: {verdict.refused}")
        return verdict

    def _check_forget_asked(self, rel: str, current: str) -> None:
        """Only the user forgets a memory: a delete needs the user's words to touch its topic at all
        (a planted "delete the memory about X" in tool output names nothing the user said)."""
        if self.sources is None:
            return
        parsed = parse_document(current)  # its words, not its frontmatter's keys (`type` is no user's word)
        words = "\n".join([str(parsed.fields.get("name") or ""), str(parsed.fields.get("description") or ""), parsed.body])
        said = [s for s in self.sources if s.kind != FOLDER]  # a folder named like the memory asks nothing
        if not judge(words, "", said).counts["user"]:
            raise Unsupported(f"{rel}: nothing the user said in this conversation is about this memory; a memory "
                              "is deleted only when the user asks to forget it")

    def provenance(self, verdict: Verdict | None) -> dict:
        from memdir.provenance import entry

        return entry(self.writer, session=self.session_id, messages=verdict.support if verdict else [])

    def _check_name_free(self, rel: str, name: str, current: str) -> None:
        """A memory's name is its own (it is also the `[[link]]` target): a new memory, or a renamed
        one, never takes another memory's name, so a different fact never hides behind an existing one."""
        from memdir.frontmatter_io import parse_header
        from memdir.model import kebab_slug
        from memdir.placing import names_in_use

        if current:
            try:
                if kebab_slug(str(parse_header(current).fields.get("name") or "")) == kebab_slug(name):
                    return  # an update that keeps the memory's own name
            except MemdirError:
                pass
        holder = names_in_use(self.store, moving=rel).get(kebab_slug(name)) if self.memory_dir.is_dir() else None
        if holder is not None:
            raise Refused(f"{rel}: the name {name!r} is already {holder.rel_path}'s; if this is the same memory, "
                          f"Read and update {holder.rel_path}, else name this one by its own distinctive words")

    def _append_log(self, file_path: str, content: str) -> str:
        from memdir.daylog import ENTRY
        from memdir.secrets import guard

        rel = self._daily_rel()
        try:
            wanted = self._rel(file_path, "file_path")
        except Refused:
            wanted = None
        if rel is None or wanted != rel:
            raise Refused(f"in daily-log mode only today's log can be written: {shown_path(self.daily_log or '')}")
        if self.writers.action(write_mode.AUTO) != write_mode.WRITE:
            raise Refused(f"write mode {self.writers.mode}: the daily log is written only in write mode auto")
        current = self._check_fresh(rel)
        if not content.startswith(current):
            raise Refused(f"{rel} is append-only: keep its current content unchanged and add lines at the end")
        added = [line for line in content[len(current):].splitlines() if line.strip()]
        bad = [line for line in added if not ENTRY.match(line.strip())]
        if bad:
            raise Refused(f"log lines must look like '- HH:MM [type] text — why: reason'; not: {bad[0][:80]}")
        guard("\n".join(added), rel)
        self.weigh("\n".join(added), "", rel)
        if not self.dry_run and added:
            from memdir.daylog import append

            day = date.fromisoformat(Path(rel).stem)
            append(self.memory_dir, day, [line.strip() for line in added])
            self.snapshots[rel] = safefs.read_text(self.memory_dir, rel, C.TOOL_READ_MAX_BYTES)
        self.written.append(rel)
        return f"appended {len(added)} entr{'y' if len(added) == 1 else 'ies'} to {rel}"

    def _tool_write(self, file_path: str, content: str) -> str:
        if self.daily_log is not None:
            return self._append_log(file_path, content)
        rel = self._memory_rel(file_path)
        current = self._check_fresh(rel)
        if not content.strip():
            if not current:
                raise Refused(f"{rel} does not exist; nothing to delete")
            self._check_may_write()
            self._check_forget_asked(rel, current)
            if not self.dry_run and self.store.delete(rel).proposed:
                self.proposed.append(rel)
                return f"proposed deleting {rel} for the user's review (write mode {self.writers.mode}); not deleted"
            self.deleted.append(rel)
            return f"deleted {rel}"
        return self._save_text(rel, content, current)

    def _tool_edit(self, file_path: str, old_string: str, new_string: str, replace_all: bool = False) -> str:
        if self.daily_log is not None:
            raise Refused("in daily-log mode the log is append-only: use Write with the current content plus new lines")
        rel = self._memory_rel(file_path)
        if rel not in self.snapshots:
            raise Refused(f"Read {rel} before editing it")
        current = self._check_fresh(rel)
        source = current
        if old_string and old_string not in current and old_string in self.as_written.get(rel, ""):
            # The model edits what it wrote in this run (`type: feedback` at the top) while the store
            # keeps its own form (`metadata:` / `type:`): the text it wrote is the same memory, unchanged since.
            source = self.as_written[rel]
        count = source.count(old_string) if old_string else 0
        if count == 0:
            raise Refused(f"old_string does not occur in {rel}; Read it again and copy old_string from what Read "
                          "shows (the stored form, without the line-number prefixes)")
        if count > 1 and not replace_all:
            raise Refused(f"old_string occurs {count} times in {rel}; add context or set replace_all")
        updated = source.replace(old_string, new_string) if replace_all else source.replace(old_string, new_string, 1)
        return self._save_text(rel, updated, current)


def _header(text: str) -> str:
    """The frontmatter block of a stored memory (what a model needs to Edit it), without the body."""
    lines = text.split("\n")
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), 0)
    return "\n".join(lines[: end + 1])


