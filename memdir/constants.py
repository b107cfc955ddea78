"""Every name, limit and default memdir relies on, in one place."""

from __future__ import annotations

# --- the memory folder -------------------------------------------------------
INDEX_NAME = "MEMORY.md"
STATE_DIRNAME = ".memdir"  # memdir's own state; never scanned as memories
TEAM_DIRNAME = "team"
LOGS_DIRNAME = "logs"
LOCK_NAME = "lock"
MEMORY_TYPES = ("user", "feedback", "project", "reference")
WHY_PREFIX = "**Why:**"
HOW_PREFIX = "**How to apply:**"
NEEDS_WHY_HOW = ("feedback", "project")

# --- paths (SPEC §1) ---------------------------------------------------------
CONFIG_HOME_ENV = "CLAUDE_CONFIG_DIR"
PATH_OVERRIDE_ENVS = ("MEMDIR_PATH", "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE")
DISABLE_ENV = "CLAUDE_CODE_DISABLE_AUTO_MEMORY"
BARE_MODE_ENV = "CLAUDE_CODE_SIMPLE"
SETTINGS_DIR_KEY = "autoMemoryDirectory"
SETTINGS_ENABLED_KEY = "autoMemoryEnabled"
MAX_SANITIZED_LENGTH = 200
TRUTHY = frozenset({"1", "true", "yes", "on"})
FALSY = frozenset({"0", "false", "no", "off", ""})

# --- the index (SPEC §3) -----------------------------------------------------
INDEX_MAX_LINES = 200
INDEX_MAX_CHARS = 25_000
INDEX_LINE_TARGET = 150  # an entry line is kept under this many characters

# --- memory files --------------------------------------------------------------
HEADER_SCAN_LINES = 30  # recall reads only this many lines of each file
NAME_MAX_CHARS = 100
DESCRIPTION_MAX_CHARS = 300
SLUG_MAX_CHARS = 60

# --- least privilege: bounded, symlink-free access inside the memory folder (issue 9) ---------
SAFE_READ_MAX_BYTES = 2 * 1024 * 1024  # memory files, MEMORY.md, state JSON: refused above this
HEADER_READ_MAX_BYTES = 64 * 1024  # a scan never reads more than this of one file's header
TOOL_READ_MAX_BYTES = 256 * 1024  # the extraction agent's Read/Grep per file
HOOK_LOG_TAIL_BYTES = 16 * 1024  # `doctor` shows the end of hook.log from this many bytes

# --- history: no-loss edits (issue 10) --------------------------------------------
HISTORY_DIRNAME = "history"  # under STATE_DIRNAME: previous bytes of every changed/deleted file
HISTORY_KEEP_PER_FILE = 200  # older versions beyond this are pruned, oldest first
AUTHORED_NAME = "authored.json"  # under STATE_DIRNAME: sha256 of the bytes memdir's extractor last wrote
OFFLINE_NOTICE_MARKER = "offline-notice-shown"  # under <config-home>/memdir: the notice is said once
EXTRACT_CHUNK_TOKENS = 12_000  # whole-window extraction: one run per chunk of about this many tokens

# --- Anthropic memory tool backend (memdir/memory_tool.py) -------------------------------
MEMORY_TOOL_ROOT = "/memories"  # the path the model sees for the memory folder
MEMORY_TOOL_DEFAULT_TYPE = "project"  # for a file written without frontmatter or a type-prefixed name
