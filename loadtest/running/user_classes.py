"""Your user classes as they ran: each ``TableUser`` subclass's attributes judged like the options they stand for,
before anything is created, and each class's design as results.json records it and the report describes it.

A class attribute is one of the run's settings (``results.schema.USER_SETTINGS``), one of Locust's (``weight``,
``wait_time``…) or the class's own: named with a leading underscore, in capitals (a constant), or listed in
``own_attributes``. Any other name is a likely misspelling (``key_stratgy``) and is refused with the nearest valid
name: a misspelled setting would silently run the command line's design instead of the one the class describes.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any

from locust import User

from ..exit_codes import UsageError
from ..options.settings import USER_SETTINGS, Settings
from ..options.stress import OPTION_BY_DEST
from ..options.values import show_mix
from ..service.operations import OPERATIONS
from ..workload.key_specs import key_strategy, row_key_maker

__all__ = ["ClassDesign", "describe", "is_table_user", "settings_per_class"]

ClassDesign = dict[str, Any]  # results.json's ``run.user_classes[i]`` (``results_schema.UserClass``)
#: Locust's own attributes a class sets as data (its methods and hooks are known by name too).
LOCUST_ATTRIBUTES = ("weight", "fixed_count", "wait_time", "host", "tasks", "abstract")
#: Methods whose near-misses Locust would silently never call (``on_strat``).
HOOKS = ("on_start", "on_stop", "wait_time")


def settings_per_class(settings: Settings, user_classes: Sequence[type]) -> list[Settings]:
    """Each table user class's settings (its attributes over the run's), every class judged first: one
    ``UsageError`` naming each wrong ``Class.attribute``, its rule and valid values. The run's own if no class."""
    classes = [cls for cls in user_classes if is_table_user(cls)]
    errors = [error for cls in classes for error in _judge(cls, settings)]
    if errors:
        many = f"{len(errors)} class attributes refused: " if len(errors) > 1 else ""
        raise UsageError(many + "; ".join(errors))
    return [settings.for_class(cls) for cls in classes] or [settings]


def is_table_user(cls: type) -> bool:
    """A ``users.TableUser`` subclass, known by its attributes (this module sits below ``users``, which imports the
    run's lifecycle): every setting and ``own_attributes``."""
    return all(hasattr(cls, name) for name in (*USER_SETTINGS, "own_attributes"))


def _judge(cls: type, settings: Settings) -> list[str]:
    """What is wrong with one class's attributes: unknown names, then each setting's type and rule, then (all of
    them right) the rules that span several (a batch's size in bytes)."""
    errors = _unknown(cls)
    given = {name: getattr(cls, name) for name in USER_SETTINGS if getattr(cls, name, None) is not None}
    for name, value in given.items():
        error = _setting(cls.__name__, name, value, settings, given)
        if error:
            errors.append(error)
    for name in ("weight", "fixed_count"):
        value = getattr(cls, name, 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            errors.append(f"{cls.__name__}.{name} {value!r}: must be a whole number, 0 or more (Locust's {name})")
    if not errors and given:
        try:
            settings.for_class(cls)
        except UsageError as err:
            errors.append(f"{cls.__name__}: {err}")
    return errors


def _unknown(cls: type) -> list[str]:
    """Attributes of the class (and of its own bases, up to the tool's and Locust's) that no one reads: the likely
    misspellings."""
    own = getattr(cls, "own_attributes", ())
    if not isinstance(own, (tuple, list, set, frozenset)) or not all(isinstance(name, str) for name in own):
        return [f"{cls.__name__}.own_attributes {own!r}: must be a tuple of attribute names, e.g. ('region',)"]
    known = set(dir(User)) | set(USER_SETTINGS) | {"own_attributes", *own}
    settings_like = (*USER_SETTINGS, *LOCUST_ATTRIBUTES)
    errors = []
    for klass in cls.__mro__:
        if klass is object or klass.__module__.partition(".")[0] in ("loadtest", "locust"):
            break  # the tool's TableUser, Locust's User, object
        for name, value in vars(klass).items():
            if name in known or name.startswith("_") or name.isupper():
                continue
            if callable(value) or isinstance(value, (staticmethod, classmethod, property, type)):
                near = difflib.get_close_matches(name, HOOKS, n=1, cutoff=0.85)  # a method of its own, unless a near miss
                if near:
                    errors.append(f"{cls.__name__}.{name}: Locust never calls it (did you mean {near[0]}?)")
                continue
            near = difflib.get_close_matches(name, settings_like, n=1, cutoff=0.6)
            hint = f"did you mean {near[0]}?" if near else f"valid: {', '.join(settings_like)}"
            errors.append(
                f"{cls.__name__}.{name}: not an attribute the tool or Locust reads ({hint}); an attribute of your own: "
                f"name it _{name} or {name.upper()}, or list it in own_attributes"
            )
    return errors


#: The Python types each setting's attribute takes: a mix as a mapping or as ``--mix``'s text.
_TYPES: dict[str, tuple[type, ...]] = {
    "mix": (Mapping, str),
    "batch_mix": (Mapping, str),
    "batch_size": (int,),
    "scan_size": (int,),
}


def _setting(cls: str, name: str, value: Any, settings: Settings, given: dict[str, Any]) -> str | None:
    """One setting attribute judged as its option is (its parser, then its key strategy's keys), named
    ``Class.attribute``; ``None`` if right."""
    where, option = f"{cls}.{name}", OPTION_BY_DEST[name]
    types = _TYPES.get(name, (str,))
    if not isinstance(value, types) or isinstance(value, bool):
        example = {"mix": '{"read": 80, "upsert": 20}', "batch_mix": '{"upsert": 100}'}.get(name, repr(option.default))
        kind = " or ".join("a dict" if t is Mapping else t.__name__ for t in types)
        return f"{where} {value!r}: must be {kind} (like {option.flag}), e.g. {name} = {example}"
    try:
        option.parse(where, value)
        seed = settings.key_seed
        if name == "key_strategy":
            skew = given.get("skew", settings.skew)
            key_strategy(value, default_key=given.get("partition_key", settings.partition_key), seed=seed, skew=skew)
        elif name == "row_key_strategy":
            row_key_maker(value, prefix="u99", seed=seed)
    except UsageError as err:
        message = str(err)
        if message.startswith(where):
            return message
        for flag in (option.flag, "--key-strategy", "--row-key-strategy", "--skew"):
            if message.startswith(flag + " "):
                return where + message[len(flag) :]
        return f"{where}: {message}"
    return None


def describe(settings: Settings, user_classes: Sequence[type], users: Mapping[str, int]) -> list[ClassDesign]:
    """Each user class that ran, as results.json records it: its name, weight, users (``users``: Locust's count by
    class name), whether it runs its own tasks, and the design it ran with (only what applied to it: a mix's batch and
    scan settings where it has batches and scans), with the attributes it set itself (the rest were the run's)."""
    described = []
    for cls in user_classes:
        row: ClassDesign = {
            "name": cls.__name__,
            "weight": getattr(cls, "weight", 1),
            "fixed_count": getattr(cls, "fixed_count", 0),
            "users": int(users.get(cls.__name__, 0)),
        }
        if not is_table_user(cls):
            described.append({**row, "table_user": False, "own_tasks": True, "design": {}, "from_class": []})
            continue
        own_tasks = any(getattr(t, "__name__", "") != "one_operation" for t in cls.tasks)  # TableUser's: the mix
        one = settings.for_class(cls)
        described.append(
            {
                **row,
                "table_user": True,
                "own_tasks": own_tasks,
                "design": design(one, own_tasks=own_tasks),
                "from_class": [name for name in USER_SETTINGS if getattr(cls, name, None) is not None],
            }
        )
    return described


def design(settings: Settings, *, own_tasks: bool = False) -> dict[str, Any]:
    """The design one class ran with, as the report shows it: the PartitionKey where the strategy is one key; the
    mix, and its batch and scan settings where it has batches and scans, unless the class runs its own tasks."""
    strategy = settings.key_strategy
    shown: dict[str, Any] = {"key_strategy": strategy}
    name, _, param = strategy.partition(":")
    if name == "single":
        shown["partition_key"] = param or settings.partition_key
    shown.update(skew=settings.skew, row_key_strategy=settings.row_key_strategy)
    if own_tasks:
        return shown
    shown["mix"] = show_mix(settings.mix)
    if "batch" in settings.mix:
        shown.update(batch_size=settings.batch_size, batch_mix=show_mix(settings.batch_mix))
    if any(OPERATIONS[op].asks == "scan" for op in settings.mix):
        shown["scan_size"] = settings.scan_size
    return shown
