"""`Record`: a small stand-in for `@dataclass` on the hook path.

`dataclasses` imports `inspect` (and with it `ast`, `dis`, `tokenize`): ~10 ms per process, and
each decorated class costs another ~0.5 ms to build. On a path whose whole budget is ~100 ms that
is worth a few lines. Fields are class annotations, as in a dataclass:

    class Job(Record):
        path: str
        tries: int = 0
        notes: list[str] = field(default_factory=list)
        kind: str = field(kw_only=True)  # required, but only by keyword

The metaclass turns them into `__slots__`; `typing.dataclass_transform` (PEP 681, seen by type
checkers only: `typing` costs ~3 ms to import) tells mypy and pyright what `__init__` and the
fields look like.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is imported by type checkers only (see the docstring)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, ClassVar, Self, TypeVar, dataclass_transform

    T = TypeVar("T")
else:

    def dataclass_transform(**_options):  # checkers read the real one; at run time the metaclass does the work
        return lambda cls: cls


class _Field:
    __slots__ = ("factory", "kw_only")

    def __init__(self, factory: Callable[[], object] | None, kw_only: bool) -> None:
        self.factory, self.kw_only = factory, kw_only


def field(*, default_factory: Callable[[], T] | None = None, kw_only: bool = False) -> T:
    """A fresh default per record (`default_factory=list`) and/or a keyword-only field."""
    # The checker takes the field's declared type from the annotation; the marker is read by the metaclass.
    return _Field(default_factory, kw_only)  # type: ignore[return-value]


class _RecordMeta(type):
    """Builds `__slots__`, the field order and the defaults from a Record's annotations."""

    def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> _RecordMeta:
        if "__slots__" in namespace and any(isinstance(base, _RecordMeta) for base in bases):
            raise TypeError(f"{name}: declare Record fields as class annotations (`name: type = default`), "
                            "not __slots__/_defaults")
        if "__annotations__" not in namespace and any(key.startswith("__annotate") for key in namespace):
            # Python 3.14+ evaluates annotations lazily and leaves none here, unless the module asks for strings.
            raise TypeError(f"{name}: add `from __future__ import annotations` to its module (Record reads them)")
        own = [key for key, hint in namespace.get("__annotations__", {}).items()
               if not str(hint).split("[")[0].endswith("ClassVar")]
        fields: list[str] = []
        defaults: dict[str, object] = {}
        factories: dict[str, Callable[[], object]] = {}
        kw_only: set[str] = set()
        for base in bases:
            fields += [f for f in getattr(base, "_fields", ()) if f not in fields]
            defaults.update(getattr(base, "_defaults", {}))
            factories.update(getattr(base, "_factories", {}))
            kw_only.update(f for f in getattr(base, "_fields", ()) if f not in getattr(base, "_positional", ()))
        for key in own:
            if key not in fields:
                fields.append(key)
            if key not in namespace:
                continue
            value = namespace.pop(key)  # a class attribute would clash with the slot of the same name
            if not isinstance(value, _Field):
                defaults[key] = value
                continue
            if value.kw_only:
                kw_only.add(key)
            if value.factory is not None:
                factories[key] = value.factory
        inherited_slots = {s for base in bases for klass in base.__mro__ for s in getattr(klass, "__slots__", ())}
        namespace["__slots__"] = tuple(key for key in own if key not in inherited_slots)
        namespace["_fields"] = tuple(fields)
        namespace["_positional"] = tuple(f for f in fields if f not in kw_only)
        namespace["_defaults"], namespace["_factories"] = defaults, factories
        return super().__new__(mcs, name, bases, namespace)


class _Base(metaclass=_RecordMeta):
    """What Record and FrozenRecord share (siblings, so checkers never see a frozen record inherit a mutable one)."""

    _fields: ClassVar[tuple[str, ...]]  # every field, in declaration order (repr, eq, replace)
    _positional: ClassVar[tuple[str, ...]]  # the fields `__init__` takes by position
    _defaults: ClassVar[dict[str, object]]  # field -> its default value
    _factories: ClassVar[dict[str, Callable[[], object]]]  # field -> what makes a fresh default (list, dict...)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        fields, defaults, factories = self._fields, self._defaults, self._factories
        if len(args) > len(self._positional):
            raise TypeError(f"{type(self).__name__} takes at most {len(self._positional)} positional arguments")
        values = dict(zip(self._positional, args, strict=False))  # fewer args than fields: the rest by keyword
        for key, value in kwargs.items():
            if key not in fields:
                raise TypeError(f"{type(self).__name__} has no field {key!r}")
            values[key] = value
        for name in fields:
            if name in values:
                value = values[name]
            elif name in defaults:
                value = defaults[name]
            elif name in factories:
                value = factories[name]()
            else:
                raise TypeError(f"{type(self).__name__} is missing {name!r}")
            object.__setattr__(self, name, value)

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._values() == self._values()

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({inner})"

    def replace(self, **changes: Any) -> Self:
        return type(self)(**{**dict(zip(self._fields, self._values(), strict=True)), **changes})


@dataclass_transform(field_specifiers=(field,))
class Record(_Base):
    # Unhashable, like a plain (mutable) dataclass; a subclass may still hash by identity (scan.Header).
    # The checker wants object's callable __hash__, but None is Python's documented way to say "unhashable"
    # (typeshed silences the same error for list).
    __hash__: ClassVar[Callable[[object], int] | None] = None  # type: ignore[assignment]


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
class FrozenRecord(_Base):
    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __hash__(self) -> int:
        return hash(self._values())
