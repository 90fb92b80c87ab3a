"""Secrets out of every output: every form a key or signature reaches text in, through every sink (logs at DEBUG,
results.json, report.html, uploads, the Partitions tab's data, Locust's HTML report, OpenTelemetry's attributes)."""

import io
import json
import logging
import sys
from dataclasses import replace
from types import SimpleNamespace
from urllib.parse import quote

import locust.html
import pytest
from helpers import run_info
from jinja2.utils import htmlsafe_json_dumps
from locust.argument_parser import parse_options
from locust.env import Environment
from synthetic import recorded

from loadtest.engines import blobs
from loadtest.findings.assess import assess
from loadtest.live import partitions_tab as live
from loadtest.live.telemetry import PartitionTelemetry
from loadtest.options.settings import Settings, namespace
from loadtest.outputs import RESULTS_FILE, write_text
from loadtest.redact import AZURITE_KEY, RedactingFilter, public_url, redact
from loadtest.report import render
from loadtest.results.summary import build


def test_redact_removes_keys_and_signatures():
    text = f"AccountKey={AZURITE_KEY};x AccountKey=abc123; https://a/t?sv=1&sig=s3cr3t&se=2 SharedAccessSignature=sv=1&sig=zz"
    cleaned = redact(text)
    for secret in (AZURITE_KEY, "abc123", "s3cr3t", "sig=zz"):
        assert secret not in cleaned


def test_public_url_keeps_the_endpoint_and_drops_a_sas_and_user_info():
    assert public_url("https://acct.table.core.windows.net/?sv=2022-11-02&sig=s3cr3t") == "https://acct.table.core.windows.net/"
    assert public_url("http://me:pw@127.0.0.1:10002/devstoreaccount1?sig=x#frag") == "http://127.0.0.1:10002/devstoreaccount1"
    assert public_url("http://127.0.0.1:10002/devstoreaccount1") == "http://127.0.0.1:10002/devstoreaccount1"


#: A secret in every form it reaches text in: as typed, spaced as the connection-string parser accepts it, quoted, a JSON or
#: Python mapping's value (and a JSON text inside JSON), percent-encoded (once, twice), JSON-escaped by an HTML-safe
#: encoder (``&`` as ``\u0026``), HTML-escaped, and the REST transport's SharedKey header. Each holds ``pl4nt3d``.
SECRET_FORMS = {
    "key": "AccountName=a;AccountKey=pl4nt3dK3y+/==;EndpointSuffix=core.windows.net",
    "key-spaced": "AccountName=a; AccountKey = pl4nt3dK3y+/== ;EndpointSuffix=core.windows.net",
    "key-quoted": 'AccountName=a;AccountKey="pl4nt3dK3y+/==";EndpointSuffix=core.windows.net',
    "key-json": json.dumps({"AccountKey": "pl4nt3dK3y+/=="}),
    "key-python": repr({"AccountKey": "pl4nt3dK3y+/=="}),
    "key-json-in-json": json.dumps(json.dumps({"AccountKey": "pl4nt3dK3y+/=="})),
    "key-percent": quote("AccountName=a;AccountKey=pl4nt3dK3y+/==;EndpointSuffix=x", safe=""),
    "sas-spaced": "TableEndpoint=https://a.table.core.windows.net; SharedAccessSignature = sv=2022-11-02&sig=pl4nt3dS1g",
    "sas-json": json.dumps({"SharedAccessSignature": "sv=2022-11-02&sig=pl4nt3dS1g"}),
    "sas-percent": quote("SharedAccessSignature=sv=2022-11-02&sig=pl4nt3dS1g", safe=""),
    "sig": "https://a.table.core.windows.net/t?sv=2022-11-02&sig=pl4nt3dS1g%2B%3D&se=2",
    "sig-spaced": "sv=2022-11-02 & sig = pl4nt3dS1g",
    "sig-quoted": "sv='2022-11-02' sig='pl4nt3dS1g'",
    "sig-percent": "next=" + quote("https://a.table.core.windows.net/t?sv=1&sig=pl4nt3dS1g&se=2", safe=""),
    "sig-percent-twice": "next=" + quote(quote("https://a/t?sv=1&sig=pl4nt3dS1g", safe=""), safe=""),
    "sig-json-escaped": str(htmlsafe_json_dumps({"url": "https://a/t?sv=1&sig=pl4nt3dS1g"})),
    "sig-html-escaped": "https://a/t?sv=1&amp;sig=pl4nt3dS1g",
    "sig-json": json.dumps({"sv": "2022-11-02", "sig": "pl4nt3dS1g"}),
    "shared-key": "Authorization: SharedKey stressacct:pl4nt3dS1gnatur3+/=",
}


@pytest.mark.parametrize("form", SECRET_FORMS.values(), ids=SECRET_FORMS.keys())
def test_redact_removes_a_secret_in_every_form_and_keeps_the_text_around_it(form):
    cleaned = redact(f"before {form} after")
    assert "pl4nt3d" not in cleaned and "***" in cleaned
    assert cleaned.startswith("before ") and cleaned.endswith(" after")


def test_redacted_json_text_stays_json_with_every_secret_gone():
    """Redaction never takes a quote or a backslash, so JSON text (results, the tab's data) stays JSON."""
    value = {"forms": SECRET_FORMS, "quoted": 'sig=pl4nt3d"x\\', "AccountKey": "pl4nt3d"}
    for text in (json.dumps(value), json.dumps(value, indent=2), str(htmlsafe_json_dumps(value))):
        cleaned = redact(text)
        assert "pl4nt3d" not in cleaned and json.loads(cleaned)["forms"].keys() == SECRET_FORMS.keys()


FORMS = " | ".join(SECRET_FORMS.values())
#: a second of load on a partition named after each form (the tab, Locust's report and OpenTelemetry show the names)
NAMED = {t: [{"partition": f"p{i} {form}", "entities": 5 + i} for i, form in enumerate(SECRET_FORMS.values())] for t in range(4)}
ONE = {t: [{"entities": 5}] for t in range(4)}  # one partition's load


def _clean(text: str, where: str) -> None:
    at = text.find("pl4nt3d")
    assert at < 0, f"a secret in {where}: …{text[max(0, at - 80) : at + 20]}…"


def test_no_form_reaches_a_log_line_or_a_traceback_at_debug():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter())
    logger = logging.getLogger("loadtest.test_redact")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        for name, form in SECRET_FORMS.items():
            logger.debug("%s: %s", name, form)
            logger.debug("%s: %r", name, {"connection": form})
            try:
                raise ValueError(form)
            except ValueError:
                logger.exception("%s failed", name)  # the traceback's last line is the exception's message
    finally:
        logger.removeHandler(handler)
    text = stream.getvalue()
    assert text.count("Traceback") == len(SECRET_FORMS) and text.count("***") >= 3 * len(SECRET_FORMS)
    _clean(text, "the log")


def test_no_form_reaches_report_html_results_json_or_an_upload(tmp_path, monkeypatch):
    """report.html redacts every value as it renders it, before escaping (escaped, ``&sig=`` reads ``&amp;sig=``);
    results.json holds the settings as ``Settings.public`` shows them and the endpoint redacted (its PartitionKeys as
    counted: no sink-wide redaction there); an upload sends those files as written."""
    sas = "https://acct.table.core.windows.net/?sv=2022-11-02&ss=t&sig=pl4nt3dS1gnature"
    info = run_info(endpoint=sas, settings={"account_url": sas, "note": "AccountKey=pl4nt3d;", **SECRET_FORMS})
    page = render(assess(build(recorded(ONE), info)), tmp_path).read_text()
    assert "sig=***" in page and "AccountKey=***" in page
    _clean(page, "report.html")

    shown = replace(Settings.from_options(namespace()), account_url=FORMS, out=FORMS).public()
    results = build(recorded(ONE), run_info(endpoint=redact(FORMS), settings=shown))
    write_text(tmp_path / RESULTS_FILE, results.to_json())
    _clean((tmp_path / RESULTS_FILE).read_text(), "results.json")

    container = _Container()
    monkeypatch.setattr(blobs, "open_container", lambda *args, **kwargs: container)
    blobs.upload_outputs(tmp_path, container="c", run_id="r1", engine="e1", connection_string="", account_url="", timeout=5)
    assert {"r1/e1/report.html", "r1/e1/results.json"} <= container.sent.keys()
    for name, data in container.sent.items():
        _clean(data.decode(), f"the upload of {name}")


class _Container:
    """A blob container that keeps what is uploaded to it."""

    def __init__(self) -> None:
        self.sent: dict[str, bytes] = {}

    def __enter__(self) -> "_Container":
        return self

    def __exit__(self, *_: object) -> None:
        pass

    def create_container(self) -> None:
        pass

    def upload_blob(self, name: str, data: io.BufferedReader, **_: object) -> None:
        self.sent[name] = data.read()


def test_no_form_reaches_the_tabs_data_or_locusts_html_report(tmp_path, monkeypatch):
    """The tab's ``/partition-stress/data`` and Locust's HTML report (its own failures and exceptions too, and the
    Partitions section, whose JSON encoder writes ``&`` as ``\\u0026``)."""
    monkeypatch.setattr(locust.html, "render_template_from", locust.html.render_template_from)  # restored after
    monkeypatch.setattr(sys, "argv", ["locust"])  # Locust's UI reads its form's extra arguments from the command line
    env = Environment(parsed_options=parse_options([]))
    env.create_local_runner()
    env.create_web_ui("127.0.0.1", 0, delayed_start=True)  # its pages through Flask's test client
    run = SimpleNamespace(
        settings=Settings.from_options(namespace()),
        metrics=recorded(NAMED),
        cluster=SimpleNamespace(lost={}),
        out=None,
        results=None,
    )
    live.register(env, run)
    data = env.web_ui.app.test_client().get("/partition-stress/data").get_data(as_text=True)
    hottest = f"p{len(SECRET_FORMS) - 1} Authorization: SharedKey stressacct:***"  # the last form, the heaviest load
    assert hottest in json.loads(data)["chart"]["series"]
    _clean(data, "/partition-stress/data")

    env.runner.log_exception("local", FORMS, f"Traceback (most recent call last):\nValueError: {FORMS}\n")
    env.events.request.fire(
        request_type="GET", name="point read", response_time=1, response_length=0, exception=ValueError(FORMS), context={}
    )
    page = locust.html.get_html_report(env)
    assert 'id="partition-stress-report"' in page and "point read" in page and "sig=***" in page
    _clean(page, "Locust's HTML report")
    env.runner.quit()
    run.metrics.close()


def test_no_form_reaches_an_opentelemetry_attribute():
    """A partition's label, as every collector and dashboard shows it: redacted, its figures kept."""
    metrics = recorded(NAMED)
    results = build(metrics, run_info())
    telemetry = PartitionTelemetry(SimpleNamespace(results=results, metrics=metrics, settings=Settings.from_options(namespace())))
    figures, ratios = telemetry.figures(), telemetry.ratios()
    assert sum(f.entities for f in figures.values()) == sum(e["entities"] for second in NAMED.values() for e in second)
    assert len(ratios) == len(SECRET_FORMS) and "p0 AccountName=a;AccountKey=***;EndpointSuffix=core.windows.net" in ratios
    _clean(" ".join([label for label, _ in figures] + list(ratios)), "OpenTelemetry's attributes")
