"""The tool's build of Locust's web UI: Locust's own React app (the ``locust-ui`` library, pinned in ``webui/``) with
the Partitions tab, built by ``scripts/setup.sh`` into ``loadtest/live/webui``.

- ``serve``: the web UI renders that build, as ``locust --build-path`` would, unless the user gave a build of their
  own; pages the build does not hold (the login page) and assets (favicons) still come from Locust's;
- ``with_partitions``: Locust's HTML report (``--html`` and the UI's *Download report*) carries a Partitions section
  drawn by the same panel, from the view the test ended with.

Without the build (a checkout not set up with npm, a wheel built without it) Locust's UI is served as it ships, with
the Partitions tab as a table (``partitions_tab.register``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import locust.html
from jinja2 import ChoiceLoader, FileSystemLoader
from jinja2.utils import htmlsafe_json_dumps
from locust.env import Environment

from ..redact import redact_values

__all__ = ["BUILD", "REPORT_SCRIPT", "built", "report_section", "serve", "with_partitions"]

BUILD = Path(__file__).resolve().parent / "webui"
REPORT_SCRIPT = BUILD / "partitions-report.js"
TAB_KEY = "partition-stress"


def built() -> bool:
    return (BUILD / "index.html").is_file() and REPORT_SCRIPT.is_file()


def serve(environment: Environment) -> bool:
    """Serve the build with the Partitions tab in the running web UI; False when Locust's own UI stays."""
    web_ui = environment.web_ui
    options = environment.parsed_options
    if web_ui is None or not built() or getattr(options, "build_path", None):
        return False
    app = web_ui.app
    app.template_folder = str(BUILD)  # index.html and /assets/ (Locust falls back to its own assets)
    app.jinja_loader = ChoiceLoader([FileSystemLoader(str(BUILD)), FileSystemLoader(locust.html.DEFAULT_BUILD_PATH)])
    return True


def report_section(view: dict[str, Any]) -> str:
    """The report's Partitions section: the view as JSON and the panel's script, both inline (the report stands
    alone); the view redacted, then ``</script>`` inside the JSON escaped."""
    return (
        '<div id="partition-stress-report"></div>\n'
        f"<script>window.partitionStress = {htmlsafe_json_dumps(redact_values(view))}</script>\n"
        f"<script>{REPORT_SCRIPT.read_text(encoding='utf-8')}</script>\n"
    )


def with_partitions(view: Callable[[], dict[str, Any] | None]) -> None:
    """Add the Partitions section to every HTML report Locust renders from now on.

    Locust renders its report (``locust.html.get_html_report``: ``--html`` and ``/stats/report``) through
    ``html.render_template_from("report.html", ...)`` with its own arguments and no extension point, so the section
    goes in there, after Locust's page has rendered it whole; Locust's own figures and texts (its host, its failures'
    and exceptions' messages and tracebacks) are redacted before it encodes them. ``view`` answers None when there is
    nothing to show."""
    original = getattr(locust.html.render_template_from, "__wrapped__", locust.html.render_template_from)

    @functools.wraps(original)
    def render(file: str, *args: Any, **kwargs: Any) -> str:
        if file == "report.html" and "template_args" in kwargs:
            kwargs["template_args"] = redact_values(kwargs["template_args"])
        page = original(file, *args, **kwargs)
        data = view() if file == "report.html" and built() else None
        if data is None or "</body>" not in page:
            return page
        head, tail = page.rsplit("</body>", 1)
        return head + report_section(data) + "</body>" + tail

    locust.html.render_template_from = render
