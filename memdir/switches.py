"""On/off settings read from the environment, the one rule for all of them: on unless set to 0, false,
no or off (any case, spaces around ignored). Stdlib only: the prompt hook reads them before anything else."""

from __future__ import annotations

import os

from memdir import constants as C


def switched_on(name: str, env=None) -> bool:
    """Whether the setting `name` is on in `env` (default: this process's environment); unset is on."""
    value = (os.environ if env is None else env).get(name, "1")
    return value.strip().lower() not in C.SWITCHED_OFF
