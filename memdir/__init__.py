"""memdir: persistent, typed memory for AI coding agents.

Kept import-free on purpose: hook entry points start from here and must stay fast.
"""

__version__ = "0.1.0"
