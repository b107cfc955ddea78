"""memdir: persistent, typed memory for AI coding agents.

Kept import-free on purpose: hook entry points start from here and must stay fast. The public
Python API (`memdir.remember`, `memdir.recall`, ...; see memdir/entry/api.py and the README) is loaded
on first attribute access through a module `__getattr__` (PEP 562), so `import memdir` alone
costs nothing.
"""

__version__ = "0.1.0"

_API = (
    "remember", "recall", "list_memories", "read", "update", "forget", "extract", "read_index", "resolve_folder",
    "MemoryInfo", "MemoryDoc", "Saved", "Forgotten", "Recalled", "RecallAnswer", "Extraction", "MemdirError",
)
__all__ = ["__version__", *_API]


def __getattr__(name: str):
    if name in _API:
        from memdir.entry import api

        value = getattr(api, name)
        globals()[name] = value  # later look-ups skip this function
        return value
    raise AttributeError(f"module 'memdir' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})
