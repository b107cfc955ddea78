"""The `memdir` console script: hooks go straight to memdir.entry.hooks, everything else to the CLI.

Kept to two imports: the Stop hook's whole budget is twice a bare Python start, and the full CLI
module (argparse, pathlib) would spend a third of it before reading the payload.
"""

import sys


def main() -> int:
    if sys.argv[1:2] == ["hook"]:
        from memdir.entry.hooks import main as hook_main

        return hook_main(sys.argv[2:])
    from memdir.entry.cli import main as cli_main

    return cli_main(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
