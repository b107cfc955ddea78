"""Soak for `memdir sync`: two machines, random edits and deletes, a sync on each after every round.

    .venv/bin/python -m benchmarks.sync_soak [--rounds 1000] [--seed 23]

Each round, each machine changes 0-3 memory files (edit, create, delete, or a new MEMORY.md line), half the
time committed at once (as memdir's own writes are), half the time left on disk for the sync to find (as
Claude Code's writes are); then the laptop syncs, then the desktop. The same file is often changed on both
sides in one round, so merges and conflicts are frequent. At the end both sync once more.
"Versions lost" counts every file content either machine ever wrote that the remote's history cannot give
back; the run also checks that both folders and the remote branch end identical.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from memdir import gitcommit, gitrepo, gitsync, syncconfig


class Machine:
    def __init__(self, root: Path, name: str) -> None:
        self.name = name
        self.project = root / name / "checkout"
        self.project.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(self.project)], check=True)
        subprocess.run(["git", "-C", str(self.project), "remote", "add", "origin", "git@example.com:me/app.git"],
                       check=True)
        self.memory = root / name / "memory"
        self.memory.mkdir()

    def sync(self, remote: str | None = None) -> gitsync.SyncResult:
        return gitsync.sync(self.memory, self.project, remote=remote)


def random_round(machine: Machine, rng: random.Random, round_no: int, written: set[str]) -> int:
    """0-3 random changes. Every file's content at the end of the round is recorded (by blob id) in `written`:
    a file written twice in one round, before anything could see it, had only its last content to keep."""
    changes = 0
    for _ in range(rng.randrange(4)):
        names = sorted(p.name for p in machine.memory.glob("*.md") if p.name != "MEMORY.md")
        op = rng.random()
        if op < 0.15 and names:
            (machine.memory / rng.choice(names)).unlink()
        elif op < 0.3:
            index = machine.memory / "MEMORY.md"
            text = (index.read_text() if index.exists() else "") + f"- [{machine.name} {round_no}](m.md)\n"
            index.write_text(text)
        else:
            name = rng.choice(names) if names and op < 0.75 else f"m{rng.randrange(40)}.md"
            data = f"---\nname: {name}\n---\n{machine.name} round {round_no} {rng.random()}\n".encode()
            (machine.memory / name).write_bytes(data)
        changes += 1
    written.update(gitrepo.blob_id((machine.memory / p).read_bytes()) for p in gitrepo.disk_files(machine.memory))
    if changes and rng.random() < 0.5:
        gitcommit.commit(machine.memory, f"round {round_no}")  # memdir's own write: committed at once
    return changes


def remote_blobs(bare: Path, branch: str) -> set[str]:
    out = subprocess.run(["git", "--git-dir", str(bare), "rev-list", "--objects", f"refs/heads/{branch}"],
                         capture_output=True, check=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=23)
    args = parser.parse_args(argv)
    outcome = soak(args.rounds, args.seed)
    for key, value in outcome.items():
        print(f"{key}: {value}")
    return 0 if outcome["versions lost"] == 0 and outcome["folders identical"] else 1


def soak(rounds: int, seed: int) -> dict[str, object]:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bare = root / "remote.git"
        subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
        laptop, desktop = Machine(root, "laptop"), Machine(root, "desktop")
        written: set[str] = set()
        times: list[float] = []
        edits = conflicts = 0
        started = time.perf_counter()
        for round_no in range(rounds):
            edits += random_round(laptop, rng, round_no, written) + random_round(desktop, rng, round_no, written)
            for machine in (laptop, desktop):
                began = time.perf_counter()
                result = machine.sync(str(bare) if round_no == 0 else None)
                times.append(time.perf_counter() - began)
                conflicts += len(result.conflicts)
        laptop.sync()
        desktop.sync()
        branch = syncconfig.branch_for(syncconfig.normalize_remote_url("git@example.com:me/app.git"))
        lost = written - remote_blobs(bare, branch)
        files = [{p: (m.memory / p).read_bytes() for p in gitrepo.disk_files(m.memory)} for m in (laptop, desktop)]
        tree = subprocess.run(["git", "--git-dir", str(bare), "ls-tree", "-r", "-z", f"refs/heads/{branch}"],
                              capture_output=True, check=True).stdout
        remote = {e.split(b"\t", 1)[1].decode(): e.split()[2].decode() for e in tree.split(b"\0") if e}
        same = remote == {p: gitrepo.blob_id(data) for p, data in files[0].items()}
        return {"rounds": rounds, "edits": edits, "syncs": len(times) + 2, "conflicts kept both": conflicts,
                "versions written": len(written), "versions lost": len(lost),
                "folders identical": files[0] == files[1] and same, "files at the end": len(files[0]),
                "sync median s": round(statistics.median(times), 3),
                "sync p95 s": round(sorted(times)[int(len(times) * 0.95)], 3),
                "total s": round(time.perf_counter() - started, 1)}


if __name__ == "__main__":
    sys.exit(main())
