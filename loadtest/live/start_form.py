"""The start form of Locust's web UI: the tool's options as a user fills them, and a bad start refused on the page.

Locust's React form renders each custom argument from ``ui_extra_args_dict``: a text field (a checkbox for a switch)
labelled from its dest with its help in brackets on one line, cut off where the field ends; in the order of the page's
JSON (Flask sorts its keys). A failed ``/swarm`` answer's ``message`` is shown on the form. So: the fields reordered
by ``FORM_GROUPS`` (JSON keys kept in order), those that do not apply left out, the run's own values as defaults, short
help (the full help on ``/partition-stress/options``), and a ``/swarm`` whose settings break a rule answered with the
rule before Locust starts anything.
"""

from __future__ import annotations

import argparse
import html
import logging
import re
from collections.abc import Callable
from typing import Any

from locust.env import Environment

from ..ceiling.plan import Plan
from ..ceiling.shape import CeilingShape
from ..exit_codes import ToolError, UsageError
from ..options.form import FORM_FIXED, FORM_GROUPS, FORM_HELP
from ..options.settings import Settings
from ..options.stress import CEILING_OPTIONS, OPTION_BY_DEST
from ..redact import redact
from ..running.user_classes import settings_per_class

__all__ = ["HELP_PAGE", "field_name", "form_fields", "register"]

log = logging.getLogger("loadtest")
HELP_PAGE = "/partition-stress/options"
#: The form's label splits every digit from the character before it (``max_p99``: "Max P9 9"); a word joiner between
#: them keeps "Max P99" whole. Locust hands the field back under that name, joiners and all.
_JOINER = "\u2060"
_CEILING = {opt.dest for opt in CEILING_OPTIONS}


def field_name(dest: str) -> str:
    """The form's name for an option: its dest, digits joined to what precedes them."""
    return re.sub(r"(?<=[a-z0-9])(?=[0-9])", _JOINER, dest)


def _dest(name: str) -> str:
    return name.replace(_JOINER, "")


def form_fields(
    locust_fields: dict[str, dict[str, Any]], settings: Settings, *, ceiling: bool, given: argparse.Namespace
) -> dict[str, dict[str, Any]]:
    """Locust's fields for the tool's options, grouped and filtered as they apply, with the run's values."""
    shown = settings.public()
    fields: dict[str, dict[str, Any]] = {}
    for _, dests in FORM_GROUPS:
        for dest in dests:
            field = locust_fields.get(dest)
            if field is None or not _applies(dest, settings, ceiling):
                continue
            value = shown[dest] if dest in shown else OPTION_BY_DEST[dest].value(given)
            opt = OPTION_BY_DEST[dest]
            default = bool(value) if opt.is_switch else ("" if value is None else str(value))
            fields[field_name(dest)] = {**field, "default_value": default, "help_text": FORM_HELP.get(dest, opt.help)}
    return fields


def _applies(dest: str, settings: Settings, ceiling: bool) -> bool:
    if dest.startswith("emulator_"):
        return settings.emulate_throttling
    if dest in _CEILING:
        return ceiling
    return dest not in FORM_FIXED


def _submitted(options: argparse.Namespace, form: dict[str, str]) -> argparse.Namespace:
    """The options as Locust's ``/swarm`` will set them from the form (a copy: nothing is changed here)."""
    submitted = argparse.Namespace(**vars(options))
    for name, value in form.items():
        opt = OPTION_BY_DEST.get(_dest(name))
        if opt is not None:
            setattr(submitted, opt.dest, value == "true" if opt.is_switch else value)
    return submitted


def check_start(environment: Environment, settings: Settings, form: dict[str, str], *, ceiling: bool) -> argparse.Namespace:
    """The options a start form gives, checked by the run's rules; ``UsageError`` naming the first broken one."""
    submitted = _submitted(environment.parsed_options, form)
    for dest in FORM_FIXED:
        name, now, opt = field_name(dest), getattr(settings, dest), OPTION_BY_DEST[dest]
        if name in form and opt.parse(opt.flag, form[name]) != now:
            raise UsageError(f"{opt.flag} {form[name]}: fixed when the process started ({now:g}); restart the run to change it")
    users = form.get("user_count", "")
    new = Settings.from_options(submitted, users=int(users) if not ceiling and users.isdigit() else 0)
    settings_per_class(new, environment.user_classes)  # the classes' attributes over the form's values
    if ceiling:
        Plan.from_options(submitted)
    return submitted


def register(environment: Environment, settings: Callable[[], Settings]) -> None:
    """The form's fields and the start's check on Locust's web UI (if running); ``settings``: the run's, as they are
    now (the form's last start changed them)."""
    web_ui = environment.web_ui
    if web_ui is None:
        return
    from flask import Response, jsonify, request

    # the form's fields in the groups' order: the page's JSON as built (Jinja's tojson sorts keys by default)
    web_ui.app.jinja_env.policies["json.dumps_kwargs"] = {"sort_keys": False}
    ceiling = lambda: isinstance(environment.shape_class, CeilingShape)  # noqa: E731
    locust_template_args = web_ui.update_template_args

    def update_template_args() -> None:
        locust_template_args()
        fields = web_ui.template_args.get("extra_options") or {}
        ours = form_fields(fields, settings(), ceiling=ceiling(), given=environment.parsed_options)
        others = {name: field for name, field in fields.items() if name not in OPTION_BY_DEST}
        web_ui.template_args["extra_options"] = {**ours, **others}

    web_ui.update_template_args = update_template_args
    web_ui.template_args.setdefault("extended_csv_files", []).append(
        {"href": HELP_PAGE, "title": "The start form's options: each one's full help and the value the next test uses"}
    )

    @web_ui.app.before_request
    def _check_start() -> Response | None:
        if request.path != "/swarm" or request.method != "POST":
            return None
        try:
            submitted = check_start(environment, settings(), request.form.to_dict(), ceiling=ceiling())
        except ToolError as err:
            message = f"not started: {redact(str(err))}"
            log.error("%s", message)
            return jsonify({"success": False, "message": message, "host": environment.host})
        for name in request.form:  # Locust sets the fields it knows by name; a joined name is the tool's to set
            if _JOINER in name:
                setattr(environment.parsed_options, _dest(name), getattr(submitted, _dest(name)))
        return None

    @web_ui.app.route(HELP_PAGE)
    def _help() -> Response:
        return Response(help_page(settings(), ceiling=ceiling(), given=environment.parsed_options), mimetype="text/html")


def help_page(settings: Settings, *, ceiling: bool, given: argparse.Namespace) -> str:
    """Every form field's full help, in the form's groups, with the value the next test uses."""
    shown = settings.public()
    rows = []
    for title, dests in FORM_GROUPS:
        applying = [d for d in dests if _applies(d, settings, ceiling)]
        if not applying:
            continue
        rows.append(f"<tr><th colspan='3'>{html.escape(title)}</th></tr>")
        for dest in applying:
            opt = OPTION_BY_DEST[dest]
            value = shown[dest] if dest in shown else opt.value(given)
            rows.append(
                f"<tr id='{dest}'><td><code>{html.escape(opt.flag)}</code></td><td>{html.escape(opt.help)}</td>"
                f"<td>{html.escape(str(value))}</td></tr>"
            )
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>partition-stress: the start form's options"
        "</title><style>body{font-family:system-ui,sans-serif;margin:1.5rem auto;max-width:1100px;padding:0 1rem}"
        "table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}"
        "</style></head><body><h1>The start form's options</h1><p><a href='/'>back to Locust</a></p>"
        "<table><tr><th>option</th><th>what it does</th><th>next test</th></tr>" + "".join(rows) + "</table></body></html>"
    )
