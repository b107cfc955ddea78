"""`Record`: a small stand-in for `@dataclass` on the hook path.

`dataclasses` imports `inspect` (and with it `ast`, `dis`, `tokenize`): ~10 ms per process, and
each decorated class costs another ~0.5 ms to build. On a path whose whole budget is ~100 ms that
is worth a few lines. Declare fields in `__slots__` and defaults in `_defaults` (a type such as
`list` is called to make a fresh value).
"""

from __future__ import annotations


class Record:
    __slots__ = ()
    _defaults: dict = {}

    def __init__(self, *args, **kwargs) -> None:
        fields = self.__slots__
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__} takes at most {len(fields)} positional arguments")
        values = dict(zip(fields, args))
        for key, value in kwargs.items():
            if key not in fields:
                raise TypeError(f"{type(self).__name__} has no field {key!r}")
            values[key] = value
        for name in fields:
            if name in values:
                value = values[name]
            elif name in self._defaults:
                default = self._defaults[name]
                value = default() if isinstance(default, type) else default
            else:
                raise TypeError(f"{type(self).__name__} is missing {name!r}")
            object.__setattr__(self, name, value)

    def _values(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._values() == self._values()  # type: ignore[attr-defined]

    __hash__ = None  # mutable by default, like a plain dataclass

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({inner})"

    def replace(self, **changes) -> Record:
        return type(self)(**{**dict(zip(self.__slots__, self._values())), **changes})


class FrozenRecord(Record):
    __slots__ = ()

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __hash__(self) -> int:
        return hash(self._values())
