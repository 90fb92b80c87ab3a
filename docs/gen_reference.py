"""The reference pages' generated parts, made from the declarations so that the docs cannot say otherwise.

Each page holds hand-written prose around blocks between ``<!-- generated: NAME -->`` and ``<!-- end: NAME -->``;
this script rewrites the blocks: the options of every command (``loadtest.command_line.dispatch``'s parser
over ``loadtest.options``' declarations), the finding kinds (``loadtest.results.finding_kinds.KINDS``), the exit
codes (``loadtest.exit_codes``) and the fields of results.json (``loadtest.results.form`` and the ``*_schema``
modules). ``tests/test_docs.py`` fails when a committed page differs from what this writes.

    .venv/bin/python docs/gen_reference.py          # rewrite the pages
    .venv/bin/python docs/gen_reference.py --check  # exit 1 naming the pages that drifted
"""

from __future__ import annotations

import argparse
import ast
import html
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import MISSING, fields, is_dataclass
from enum import Enum
from pathlib import Path
from types import NoneType, UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints, is_typeddict

import loadtest
from loadtest import exit_codes
from loadtest.command_line.dispatch import _parser
from loadtest.findings.examples import EXAMPLES
from loadtest.options.commands import COMMANDS
from loadtest.options.option import Option
from loadtest.options.stress import OPTIONS
from loadtest.results.finding_kinds import KINDS, SEVERITY
from loadtest.results.finding_names import Severity
from loadtest.results.form import Results

DOCS = Path(__file__).resolve().parent


# --- the blocks ------------------------------------------------------------------------------------------------------


def _cell(text: str) -> str:
    """Text for a table cell or a list item: ``<`` outside code spans escaped (``<run-id>`` is no HTML tag), no pipe."""
    parts = re.split(r"(`[^`]*`)", text.replace("|", "/"))
    return "".join(part if part.startswith("`") else html.escape(part, quote=False) for part in parts)


def _declared() -> list[Option]:
    """Every Option a command registers, as the options wing declares them (``commands.COMMANDS``)."""
    found: list[Option] = []
    for groups in COMMANDS.values():
        found += [opt for _, options in groups for opt in options if opt not in found]
    return found


def _option_of(action: argparse.Action, declared: list[Option]) -> Option:
    """The declaration an argparse action was made from: its flags, and the help it was given."""
    given = (action.help or "").replace("%%", "%")
    flags = tuple(action.option_strings) or (action.dest,)
    matches = [opt for opt in declared if opt.flags == flags and given.startswith(opt.help)]
    if not matches:
        raise LookupError(f"{'/'.join(flags)}: not declared in loadtest.options.commands.COMMANDS")
    return max(matches, key=lambda opt: len(opt.help))


def _default(opt: Option) -> str:
    if opt.required:
        return "required"
    if opt.is_switch:
        return "off"
    if opt.default in (None, ""):
        return "—"
    shown = f"{opt.default:g}" if isinstance(opt.default, float) else str(opt.default)
    return f"`{shown}`"


def _option_rows(opts: list[Option]) -> list[str]:
    rows = ["| option | default | meaning |", "|---|---|---|"]
    for opt in opts:
        flags = ", ".join(f"`{flag}`" for flag in opt.flags)
        env = f" (also `{opt.locust_env}`)" if opt.locust and not opt.positional else ""
        rows.append(f"| {flags} | {_default(opt)} | {_cell(opt.help)}{env} |")
    return rows


def options_block() -> str:
    """Each command's options as its parser has them, grouped as its ``--help`` groups them; the stress test's
    options (``OPTIONS``) once, at the end, and each command that takes them says which."""
    declared = _declared()
    stress = {opt.flag for opt in OPTIONS}
    commands = _parser()._subparsers._group_actions[0]  # noqa: SLF001
    lines: list[str] = []
    for name, sub in commands.choices.items():
        summary = next(a.help for a in commands._choices_actions if a.dest == name)  # noqa: SLF001
        lines += [f"### loadtest {name}", "", _cell(summary[0].upper() + summary[1:]) + ".", ""]
        for group in sub._action_groups:  # noqa: SLF001
            actions = [a for a in group._group_actions if not isinstance(a, argparse._HelpAction)]  # noqa: SLF001
            if not actions:
                continue
            opts = [_option_of(action, declared) for action in actions]
            if {opt.flag for opt in opts} <= stress and group.title not in ("the run", "the engines"):
                left_out = [opt.flag for opt in OPTIONS if opt.flag not in {o.flag for o in opts}]
                but = f", except {', '.join(f'`{flag}`' for flag in left_out)}" if left_out else ""
                lines += [f"And [the stress test's options](#the-stress-tests-options){but}.", ""]
                continue
            lines += [f"*{group.title}*", "", *_option_rows(opts), ""]
    lines += [
        "### The stress test's options",
        "",
        "`loadtest run`, `loadtest ceiling`, `locust -f` with the tool's locustfile and the web UI's form take these; "
        "each is also a `LOCUST_<OPTION>` variable and a `locust.conf` line.",
        "",
        *_option_rows(list(OPTIONS)),
    ]
    return "\n".join(lines)


def findings_block() -> str:
    """Every finding kind, heaviest first, with its meaning, remedies by scope, and what ``--fail-on`` does with it."""
    lines = ["| finding | severity | means | what to do | `--fail-on` | fails the run |", "|---|---|---|---|---|---|"]
    for kind, declared in sorted(KINDS.items(), key=lambda item: item[1].severity):
        remedy = declared.remedy
        if declared.account_remedy:
            remedy += f" *The account:* {declared.account_remedy}"
        if declared.simulated_remedy:
            remedy += f" *In a simulation:* {declared.simulated_remedy}"
        takes = f"`{kind.value.lower()}`" if declared.fail_on else "—"
        fails = "yes (exit 1)" if declared.fails_run else "no"
        lines.append(
            f"| `{kind.value}` | {declared.severity.name.lower()} | {_cell(declared.means)} | {_cell(remedy)} "
            f"| {takes} | {fails} |"
        )
    return "\n".join(lines)


def examples_block() -> str:
    """A message of each kind as its detector words one (``finding_examples.EXAMPLES``), heaviest first."""
    lines = ["| finding | for example |", "|---|---|"]
    for kind in sorted(KINDS, key=SEVERITY.__getitem__):
        lines.append(f"| `{kind.value}` | {_cell(EXAMPLES[kind])} |")
    return "\n".join(lines)


def severities_block() -> str:
    return "\n".join(f"{s.value + 1}. `{s.name.lower()}`" for s in Severity)


def exit_codes_block() -> str:
    """The exit codes as ``exit_codes`` declares them: the constant, and the error class that exits with it."""
    errors = {cls.exit_code: cls for cls in (exit_codes.RunError, exit_codes.UsageError)}
    lines = ["| code | constant | raised as |", "|---|---|---|"]
    for name, value in sorted(vars(exit_codes).items(), key=lambda item: str(item[1])):
        if name.startswith("EXIT_"):
            cls = errors.get(value)
            raised = f"`{cls.__name__}`: {_cell(cls.__doc__ or '')}" if cls else "—"
            lines.append(f"| `{value}` | `{name}` | {raised} |")
    return "\n".join(lines)


def _type(hint: Any) -> str:
    """A declared type in words, with links to the objects' own sections."""
    origin, args = get_origin(hint), get_args(hint)
    if origin is Annotated:
        return _type(args[0])
    if origin in (Union, UnionType):
        return " or ".join(_type(arg) for arg in args)
    if origin is list:
        return f"list of {_type(args[0])}"
    if origin is dict:
        return f"object of {_type(args[1])}"
    if origin is Literal:
        return "one of " + ", ".join(f"`{arg}`" for arg in args)
    if hint is NoneType:
        return "null"
    if is_typeddict(hint) or is_dataclass(hint):
        return f"[{hint.__name__}](#{hint.__name__.lower()})"
    if isinstance(hint, type) and issubclass(hint, Enum):
        return "one of " + ", ".join(f"`{member.value}`" for member in hint)
    return {int: "whole number", float: "number", str: "text", bool: "true or false", Any: "any"}.get(hint, str(hint))


def _objects(hint: Any) -> Iterator[Any]:
    """The dataclasses and TypedDicts a type names, as deep as they go."""
    if is_typeddict(hint) or is_dataclass(hint):
        yield hint
    for arg in get_args(hint):
        yield from _objects(arg)


def _members(cls: Any) -> list[tuple[str, Any, bool]]:
    """(name, type, later): ``later`` for a field results.json written before it lack (a default, or NotRequired)."""
    hints = get_type_hints(cls)
    if is_dataclass(cls):  # a field kept in a file beside results.json: the form of its rows
        return [
            (f.name, f.metadata.get("older", hints[f.name]), (f.default, f.default_factory) != (MISSING, MISSING))
            for f in fields(cls)
        ]
    return [(name, hint, name not in cls.__required_keys__) for name, hint in hints.items()]


def results_block() -> str:
    """results.json's objects from ``Results`` down, each field with its declared type."""
    seen: list[Any] = []
    queue: list[Any] = [Results]
    while queue:
        cls = queue.pop(0)
        if cls in seen:
            continue
        seen.append(cls)
        for _, hint, _ in _members(cls):
            queue.extend(_objects(hint))
    lines: list[str] = []
    for cls in seen:
        doc = " ".join((cls.__doc__ or "").strip().split("\n\n")[0].split())
        lines += [f"### {cls.__name__}", ""]
        if doc and not doc.startswith(f"{cls.__name__}("):
            lines += [_cell(doc), ""]
        beside = {f.name: f.metadata["beside"] for f in fields(cls) if f.metadata.get("beside")} if is_dataclass(cls) else {}
        for name, hint, later in _members(cls):
            optional = " (optional)" if later else ""
            where = f", in `{beside[name]}` beside results.json (before that file, in results.json)" if name in beside else ""
            lines.append(f"- `{name}`: {_type(hint)}{optional}{where}")
        lines.append("")
    return "\n".join(lines).rstrip()


#: page → the blocks it holds, each made by its function.
def map_block() -> str:
    """Where a change goes: a row per top-level module and per wing, in the words of its own docstring (a wing's
    ``__init__``), so the map says what the code says."""
    package = Path(loadtest.__file__).parent
    rows = ["| where | its job, in its own docstring |", "|---|---|"]
    for path in sorted(package.glob("*.py")):
        rows.append(f"| `{path.name}` | {_cell(_first_paragraph(path))} |")
    for path in sorted(package.glob("*/__init__.py")):
        rows.append(f"| `{path.parent.name}/` | {_cell(_first_paragraph(path, whole=True))} |")
    return "\n".join(rows)


def _first_paragraph(path: Path, *, whole: bool = False) -> str:
    """A module's docstring, its first paragraph (a wing's: all of it), on one line."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    return " ".join((doc if whole else doc.split("\n\n")[0]).split())


BLOCKS: dict[str, dict[str, Callable[[], str]]] = {
    "development.md": {"map": map_block},
    "reference/options.md": {"options": options_block},
    "reference/findings.md": {"findings": findings_block, "examples": examples_block, "severities": severities_block},
    "reference/exit-codes.md": {"exit-codes": exit_codes_block},
    "reference/results.md": {"results": results_block},
}


# --- the pages ---------------------------------------------------------------------------------------------------------


def fill(text: str, blocks: dict[str, Callable[[], str]]) -> str:
    """The page with each generated block made anew from its declaration."""
    for name, make in blocks.items():
        begin, end = f"<!-- generated: {name} -->", f"<!-- end: {name} -->"
        if text.count(begin) != 1 or text.count(end) != 1:
            raise ValueError(f"{begin} ... {end}: the page must hold each marker once")
        head, rest = text.split(begin)
        _, tail = rest.split(end)
        text = f"{head}{begin}\n\n{make()}\n\n{end}{tail}"
    return text


def pages() -> dict[Path, str]:
    """Every generated page as it should read."""
    return {DOCS / page: fill((DOCS / page).read_text(), blocks) for page, blocks in BLOCKS.items()}


def main(argv: list[str] | None = None) -> int:
    check = "--check" in (argv if argv is not None else sys.argv[1:])
    drifted = [path for path, text in pages().items() if path.read_text() != text]
    if check:
        for path in drifted:
            print(f"{path.relative_to(DOCS.parent)}: differs from its declarations; run docs/gen_reference.py")
        return 1 if drifted else 0
    for path in drifted:
        path.write_text(pages()[path])
        print(f"wrote {path.relative_to(DOCS.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
