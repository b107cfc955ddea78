"""The memory folder as the store reads it: paths, the scan, finding a memory, loading one, MEMORY.md, history lookups.

`StoreReader` is the half of `MemoryStore` (memdir/store.py) that never changes the folder; every change, under the
folder lock, is `MemoryStore`'s. Every open goes through `memdir.safefs`: nothing inside the folder is read through
a symlink.
"""

from __future__ import annotations

from pathlib import Path

from memdir import constants as C, githistory, history, naming, safefs
from memdir.errors import MemdirError
from memdir.frontmatter_io import parse_document
from memdir.not_a_memory import not_a_memory, refused_entry
from memdir.scan import Header, ScanResult, scan

# memdir.model (pydantic) is imported where a memory is built: `list` and `doctor` never build one, and
# pydantic's import was a fifth of `list` at 20,000 memories.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from memdir.file_facts import FileFacts
    from memdir.model import Memory


class StoreReader:
    """One memory folder (personal, or team memory below it), read without following a symlink."""

    def __init__(self, root: Path, *, state_dir: Path | None = None, team: bool = False) -> None:
        self.root = Path(root)
        self.state_dir = state_dir or self.root / C.STATE_DIRNAME
        self.team = team
        # Every open walks from `base` (the personal folder) without following symlinks; team memory
        # is the `team/` folder below it, so a symlinked `team/` is refused like any other.
        self.base = self.state_dir.parent
        self.prefix = safefs.rel_to(self.base, self.root) + "/" if self.root != self.base else ""
        self.state_rel = safefs.rel_to(self.base, self.state_dir)

    # --- paths ------------------------------------------------------------
    @property
    def index_path(self) -> Path:
        return self.root / C.INDEX_NAME

    @property
    def lock_path(self) -> Path:
        return self.state_dir / (C.LOCK_NAME + ("-team" if self.team else ""))

    def _rel(self, rel_path: str) -> str:
        """`rel_path` (relative to this store's root) relative to the folder every open walks from."""
        return self.prefix + rel_path

    def exists(self, rel_path: str) -> bool:
        """Something (a file of any kind) is at `rel_path`, looked at without following a symlink."""
        return safefs.lstat(self.base, self._rel(rel_path)) is not None if self.base.is_dir() else False

    def read_file(self, rel_path: str) -> str:
        """A file's text, never through a symlink, bounded; one-line errors for what cannot be read."""
        return safefs.read_text(self.base, self._rel(rel_path))


    def resolve_rel(self, rel_path: str) -> Path:
        """An in-folder path for `rel_path`; anything that would escape the folder is refused."""
        if "\x00" in rel_path or "\\" in rel_path or rel_path.startswith("/") or ".." in rel_path.split("/"):
            raise MemdirError(f"{rel_path!r}: memory paths are plain names inside the folder, like feedback_x.md")
        if not rel_path.endswith(".md") or naming.on_disk(Path(rel_path).name) == naming.on_disk(C.INDEX_NAME):
            raise MemdirError(f"{rel_path!r}: a memory file name must end in .md and not be {C.INDEX_NAME}")
        if any(part.startswith(".") for part in rel_path.split("/")):
            raise MemdirError(f"{rel_path!r}: hidden names are reserved for memdir's own state")
        parent = "/".join(self._rel(rel_path).split("/")[:-1])
        if self.base.is_dir():
            safefs.check_inside(self.base, parent)  # a symlinked folder on the way is refused
            st = safefs.lstat(self.base, self._rel(rel_path))
            if st is not None and not safefs.is_regular_file(self.base, self._rel(rel_path)):
                raise MemdirError(refused_entry(rel_path, safefs.kind_of(st.st_mode)))
        return self.root / rel_path

    # --- reading ------------------------------------------------------------
    def scan(self, facts: FileFacts | None = None) -> ScanResult:
        """Every memory's header. With `facts` (memdir/file_facts.py): headers of unchanged files come
        from the cache, without the excerpt recall ranks on; for listing and lookups by name."""
        exclude = () if self.team else (C.TEAM_DIRNAME,)
        if self.prefix and self.base.is_dir():
            try:
                safefs.check_inside(self.base, self.prefix)
            except OSError as exc:  # a symlinked team/ is never followed
                return ScanResult([], [(self.prefix.rstrip("/"), str(exc))])
        if facts is not None:
            from memdir import file_facts

            return file_facts.scan(self.root, facts, exclude)
        return scan(self.root, exclude_dirs=exclude)

    def facts(self) -> FileFacts:
        """The per-file cache `list`, `doctor` and `find` scan through; call its save() when done."""
        from memdir.file_facts import FileFacts

        return FileFacts(self.base, self.prefix)

    def find(self, ref: str) -> Header:
        """A memory by relative path, file name (with or without .md) or name (case-insensitive).

        Anything but an exact relative path may name several memories (two types sharing a
        Claude Code `name:` slug, one file name in two subfolders, one memory's file name another's
        name): then it is a one-line error listing them, never an arbitrary pick."""
        facts = self.facts()
        headers = self.scan(facts).headers
        facts.save()
        wanted = ref.strip()
        # An exact relative path wins over a bare file name that a file in a subfolder also has. A bare
        # stem ("testing") is not a path: another memory may be named that.
        for header in headers:
            if wanted == header.rel_path or ("/" in wanted and wanted == header.rel_path.removesuffix(".md")):
                return header
        # A name as typed ("Use pnpm, not npm") also finds the slug Claude Code's form stores (use-pnpm-not-npm).
        from memdir.model import kebab_slug

        names = (wanted.casefold(), kebab_slug(wanted))
        file_names = (wanted, wanted + ".md")  # a bare file name, with or without .md (no Path per memory: 20,000)
        matches = [h for h in headers
                   if h.rel_path.rpartition("/")[2] in file_names or (h.name and h.name.casefold() in names)]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            choices = ", ".join(f"{h.rel_path} ({h.type or 'no type'})" for h in sorted(matches, key=lambda h: h.rel_path))
            raise MemdirError(f"{ref!r} names several memories: {choices}; pass the one you mean by its path")
        raise MemdirError(not_a_memory(self, wanted) or f"no memory named {ref!r} in {self.root}; see `memdir list`")

    def read(self, ref: str) -> tuple[Memory, Header]:
        header = self.find(ref)
        return self.load(header.rel_path), header

    def load(self, rel_path: str) -> Memory:
        path = self.resolve_rel(rel_path)
        try:
            parsed = parse_document(self.read_file(rel_path))
        except safefs.UnsafePath:
            raise
        except OSError as exc:
            raise MemdirError(f"{path}: cannot read ({exc.strerror or type(exc).__name__})") from None
        from memdir.model import memory_from_fields

        return memory_from_fields(parsed.fields, parsed.body, str(path))

    def index(self) -> str:
        """MEMORY.md's text ("" when absent). Over the read cap or not UTF-8: a one-line error, so a
        rewrite never works from a partial copy."""
        if not self.base.is_dir():
            return ""
        return safefs.read_text_or(self.base, self._rel(C.INDEX_NAME), max_bytes=C.INDEX_READ_MAX_BYTES)

    def text_or_empty(self, rel_path: str) -> str:
        """A file's text, or "" when it cannot be read (for comparisons that must never fail a write)."""
        try:
            return self.read_file(rel_path)
        except (OSError, MemdirError, UnicodeDecodeError):
            return ""

    # --- history --------------------------------------------------------------
    def history_key(self, ref: str) -> str:
        """The relative path whose history `ref` names; works for deleted memories too."""
        if ref.strip() in (C.INDEX_NAME,):
            return C.INDEX_NAME
        try:
            return self.find(ref).rel_path
        except MemdirError:
            wanted = ref.strip()
            for rel in self._known_files() + self._git_known_files():
                if wanted in (rel, rel.removesuffix(".md"), Path(rel).name, Path(rel).stem):
                    return rel
            for rel in (wanted, wanted + ".md"):  # a hashed key (long or secret-like name) is found by its path
                if rel.endswith(".md") and history.versions(self.state_dir, self._rel(rel)):
                    return rel
            raise

    def _known_files(self) -> list[str]:
        """Paths (relative to this store) with history: team memory's are kept as `team/<name>`."""
        team = f"{C.TEAM_DIRNAME}/"
        known = history.known_files(self.state_dir)
        if not self.prefix:
            return [rel for rel in known if not rel.startswith(team)]
        # a bare name may be a team memory's version kept before team memory had its own history
        return [rel[len(self.prefix):] if rel.startswith(self.prefix) else rel for rel in known]

    def _git_known_files(self) -> list[str]:
        """Paths (relative to this store) the git history ever held."""
        known = githistory.known_files(self.base) if self.state_rel == C.STATE_DIRNAME else []
        return [rel[len(self.prefix):] for rel in known if rel.startswith(self.prefix)]

    def history_rows(self, rel_path: str) -> list[githistory.Row]:
        """Every version of a memory of this store (or its MEMORY.md), git's and the old reader's, newest first."""
        return githistory.rows(self.base, self._rel(rel_path))

    def files_with_history(self) -> list[str]:
        """Every path of this store with kept versions or git history, deleted memories included."""
        return self._known_files() + self._git_known_files()

    def history_versions(self, rel_path: str) -> list[history.Version]:
        """Kept versions of a memory of this store (or its MEMORY.md), newest first."""
        return history.versions(self.state_dir, self._rel(rel_path))

    def shown_ref(self, rel_path: str) -> str:
        """How the user names this file on the command line."""
        return f"--team {rel_path}" if self.team else rel_path
