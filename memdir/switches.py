"""On/off settings read from the environment, the one rule for all of them: on unless set to 0, false,
no or off (any case, spaces around ignored). Stdlib only: the prompt hook reads them before anything else."""

from __future__ import annotations

import os

from memdir import constants as C

# Every setting read by `switched_on`: its value means on or off, nothing more (recall.socket_place keys on that).
SWITCHES = frozenset({C.RECALL_SERVER_ENV, C.TOKEN_STORE_FILL_ENV, C.DENSE_DISABLE_ENV, C.GIT_HISTORY_ENV})


def switched_on(name: str, env=None) -> bool:
    """Whether the setting `name` is on in `env` (default: this process's environment); unset is on."""
    value = (os.environ if env is None else env).get(name, "1")
    return value.strip().lower() not in C.SWITCHED_OFF
