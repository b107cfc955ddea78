"""memdir's entry point: `main` behind the `memdir` console script, and `launch` behind the hook command
`memdir install` registers (memdir.entry.install.LAUNCH). Hooks go straight to memdir.entry.hooks,
everything else to the CLI.

Kept to a few imports: the Stop hook's whole budget is twice a bare Python start, and the full CLI
module (argparse, pathlib) would spend a third of it before reading the payload.
"""

import io  # loaded while Python starts: no cost
import sys


def main() -> int:
    if sys.argv[1:2] == ["hook"]:
        early, asked, stdin = None, False, None
        if isinstance(sys.stdin, io.TextIOWrapper) and sys.stdin.encoding != "utf-8" == sys.getfilesystemencoding():
            # Claude Code writes its payload in UTF-8 whatever the locale says: the console script's form (Windows,
            # where file names are UTF-8 too) read a Chinese prompt in cp1252 as other letters. The registered
            # command runs in UTF-8 mode (C.PYTHON_UTF8_MODE); without it, a file system encoding other than UTF-8
            # reads the payload's paths as the locale's text does, and they stay as they are.
            sys.stdin.reconfigure(encoding="utf-8", errors="surrogateescape")
        if sys.argv[2:3] == ["prompt"]:  # the question to the warm server goes out before the hook's imports
            from memdir.entry.early_ask import read_and_ask

            stdin, early = read_and_ask(sys.stdin)
            asked = True
        from memdir.entry.hooks import main as hook_main

        return hook_main(sys.argv[2:], stdin=stdin, early=early, asked=asked)
    from memdir.entry.cli import main as cli_main

    return cli_main(sys.argv[1:])


def launch() -> None:
    """What the hook command `memdir install` registers runs (memdir.entry.install.LAUNCH): main(), then, for a
    hook, out without Python's teardown. Unloading the ~130 modules a prompt hook holds takes 6-7 ms, a fifth
    of its own work, and nothing is left to do by then: the output is written, every file write has finished
    (atomically) before main returned, and the only threads left are daemon threads, which a normal exit
    does not wait for either."""
    code = main()
    if sys.argv[1:2] == ["hook"]:
        import os

        for stream in (sys.stdout, sys.stderr):
            try:
                if stream is not None:  # None: started with that descriptor closed
                    stream.flush()
            except (OSError, ValueError):  # a closed pipe: nothing more can reach Claude Code anyway
                pass
        os._exit(code)
    raise SystemExit(code)


if __name__ == "__main__":
    sys.exit(main())
