"""What people call the job of a tool when they do not name it.

"install the dependencies" is about the package manager a memory names (pnpm), though it shares no
word with "never use npm in this repo, use pnpm"; and the dense model cannot tell: its cosine for that
prompt (0.81) is lower than for "rename the repo" (0.83), which the memory does not help with. So a
memory whose name or description names a tool of a kind below also matches that kind's job words,
at RELATED_WEIGHT of a word it says itself (recall.lexical.Ranker). Only tools whose name is not
also an everyday word (yarn, black, gem, jest, brew are left out: a note about knitting is not about
packages); a tool missing here is still found by its own name.
"""

from __future__ import annotations

from memdir.words import stem

RELATED_WEIGHT = 0.5

_KINDS = (
    # (tools, the words for their job)
    ("npm pnpm pip pipx poetry conda pipenv bundler gradle nuget",
     "install installs installing dependency dependencies deps package packages lockfile"),
    ("eslint prettier ruff flake8 pylint isort rubocop gofmt clippy stylelint",
     "lint linter linting format formatter formatting"),
    ("pytest vitest unittest rspec junit playwright cypress", "test tests testing"),
    ("mypy pyright", "type types typing typecheck"),
    ("postgres postgresql mysql sqlite mongodb", "database databases db sql"),
    ("docker podman kubernetes k8s", "container containers image images"),
)
# Keyed by the tool's name as written, not its stem: a tool's name is not inflected, and its stem is another word's
# ("pipe", "pipes", "piping" stem to pip, "bundle" to bundler's "bundl"), so a memory about shell pipes was taken for
# one about the package manager and recalled for "install the dependencies" (a hostile review).
_JOBS: dict[str, frozenset[str]] = {}
for _tools, _words in _KINDS:
    for _tool in _tools.split():
        _JOBS[_tool] = frozenset(stem(w) for w in _words.split())


def jobs_of(words: set[str]) -> set[str]:
    """The job words (stemmed) of every tool among `words` (as written, lower-case: memdir.words.split_words)."""
    out: set[str] = set()
    for term in words & _JOBS.keys():
        out |= _JOBS[term]
    return out
