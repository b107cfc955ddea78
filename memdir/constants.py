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

# --- recall by meaning and verification (issue 13) -------------------------------
EMBEDDINGS_DIRNAME = "embeddings"  # under STATE_DIRNAME: one record file per embedding model
VERIFY_READ_BYTES = 8192  # how much of a memory file verification reads for names
