"""The two stages, transcript -> memories (`extractor`) and prompt -> memories (`recall`).

They live in the repository's top-level `extractor/` and `recall/` folders and are installed here, under one
package, through symlinks. They never import each other or `memdir.entry`; only the entry layer imports them.
"""
