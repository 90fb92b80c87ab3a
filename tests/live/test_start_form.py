"""The web UI's start form: its fields as a user fills them and a bad start refused on the page, in headless Chromium
through Locust's real web UI against the session's Azurite; the form's rules in this process."""

from __future__ import annotations

import json
import os
import urllib.request

import pytest
from browser import chromium_page
from helpers import web_ui_process

from loadtest.child_process import free_port
from loadtest.exit_codes import UsageError
from loadtest.live.start_form import field_name, form_fields
from loadtest.options.form import FORM_FIXED, FORM_GROUPS
from loadtest.options.settings import Settings, namespace
from loadtest.options.stress import OPTIONS
from loadtest.service.entities import EntityShape

LABELS = "() => [...document.querySelectorAll('form label')]"
CUT_LABELS = LABELS + ".filter(l => l.scrollWidth > l.clientWidth + 1).map(l => l.innerText)"


@pytest.fixture
def web_form(azurite, tmp_path, request):
    """``locust -f LOCUSTFILE`` with its web UI on a free loopback port, stopped by PID; its URL and log."""
    port = free_port()
    log = tmp_path / "locust.log"
    env = {**os.environ, "AZURE_STORAGE_CONNECTION_STRING": azurite.connection_string}
    args = ["-m", "locust", "-f", request.param, "--web-host", "127.0.0.1", "--web-port", str(port)]
    args += ["--seed-entities", "50", "--out", str(tmp_path / "report")]
    with web_ui_process(args, port=port, env=env, log=log) as (child, url):
        yield url, log
    assert child.returncode == 0, log.read_text()


def _stats(url: str) -> dict:
    with urllib.request.urlopen(url + "/stats/requests", timeout=5) as response:
        return json.loads(response.read())


def _field_names(page) -> list[str]:
    page.click("text=Custom parameters")
    return page.eval_on_selector_all("form input[name]", "inputs => inputs.map(i => i.name)")


@pytest.mark.browser
@pytest.mark.parametrize("web_form", ["loadtest/locustfile.py"], indirect=True)
def test_a_refused_start_shows_its_reason_on_the_form_and_sends_nothing(web_form, artifacts):
    url, log = web_form
    with chromium_page(1300, 1000) as page:
        page.goto(url + "/")
        names = _field_names(page)
        ours = [n for n in names if n not in ("userCount", "spawnRate", "host", "runTime", "profile")]
        # grouped as a user thinks: the key design first, then the workload, the load's shape, the outputs
        assert ours[0] == "partitionKey", ours
        assert ours.index("mix") < ours.index("arrivalRate") < ours.index("failOn"), ours
        # what does not apply to this run is not there: no ceiling search, no emulator, nothing fixed at start
        assert not [n for n in ours if n.startswith(("ceiling", "emulator", "stepTime", "maxP"))], ours
        assert not {"table", "accountUrl", "runId", "engine", "emulateThrottling", "connectionString"} & set(ours)
        # the form shows what the run uses: "0 = as few as fit" is the entity's real number of properties
        assert page.input_value("input[name=properties]") == str(EntityShape.for_size(1024).properties)
        assert page.evaluate(CUT_LABELS) == []  # every label and its help whole, not cut off with "…"

        page.fill("input[name=userCount]", "3")
        page.fill("input[name=spawnRate]", "3")
        page.fill("input[name=partitionKey]", "orders/2026")
        page.click("button:has-text('Start')")
        alert = page.locator("[role=alert]:has-text('not started')")
        alert.wait_for(timeout=15_000)
        assert "--partition-key 'orders/2026'" in alert.inner_text()
        page.screenshot(path=str(artifacts / "webui-refused-start.png"), full_page=True)
        assert page.locator("button:has-text('Start')").count() == 1  # still the start form
    stats = _stats(url)
    assert stats["state"] == "ready" and stats["user_count"] == 0
    assert sum(row["num_requests"] for row in stats["stats"]) == 0
    assert "Ramping to" not in log.read_text()
    with urllib.request.urlopen(url + "/partition-stress/options", timeout=5) as response:
        page_text = response.read().decode()
    assert "--partition-key" in page_text and "timestamp:FORMAT (e.g. yyyyMMddHHmm" in page_text  # help in full


@pytest.mark.browser
@pytest.mark.parametrize("web_form", ["loadtest/ceiling_locustfile.py"], indirect=True)
def test_a_ceiling_search_form_shows_its_steps_with_labels_as_the_docs_name_them(web_form):
    url, _ = web_form
    with chromium_page(1300, 1000) as page:
        page.goto(url + "/")
        names = [n.replace("\u2060", "") for n in _field_names(page)]
        assert {"ceilingStart", "ceilingStep", "ceilingMax", "stepTime", "maxP99"} <= set(names), names
        labels = page.evaluate(LABELS + ".map(l => l.innerText.replaceAll('\u2060', ''))")
        assert any(label.startswith("Max P99 (") for label in labels), labels
        assert not any("P9 9" in label for label in labels)
        assert page.evaluate(CUT_LABELS) == []


def test_every_option_of_a_stress_test_has_one_place_in_the_form_or_is_fixed_at_start():
    grouped = [dest for _, dests in FORM_GROUPS for dest in dests]
    assert len(grouped) == len(set(grouped))
    assert {opt.dest for opt in OPTIONS} <= set(grouped) | set(FORM_FIXED)


def test_the_form_shows_the_runs_values_and_the_emulators_budgets_only_while_it_runs():
    locust_fields = {opt.dest: {"default_value": "", "help_text": opt.help} for opt in OPTIONS}
    plain = form_fields(locust_fields, Settings.from_options(namespace()), ceiling=False, given=namespace())
    assert not [name for name in plain if name.startswith("emulator_")] and "emulate_throttling" not in plain
    assert plain["properties"]["default_value"] == str(EntityShape.for_size(1024).properties)
    throttled = Settings.from_options(namespace(emulate_throttling=True, emulator_partition_rate=123))
    fields = form_fields(locust_fields, throttled, ceiling=False, given=namespace())
    assert fields["emulator_partition_rate"]["default_value"] == "123.0"
    assert field_name("max_p99") != "max_p99" and field_name("max_p99").replace("\u2060", "") == "max_p99"


def test_a_start_that_changes_what_the_process_started_with_is_refused():
    from locust.env import Environment
    from locust.event import Events

    from loadtest.live.start_form import check_start

    options = namespace(emulate_throttling=True, emulator_partition_rate=123)
    env = Environment(events=Events(), parsed_options=options)
    settings = Settings.from_options(options)
    assert check_start(env, settings, {"emulator_partition_rate": "123"}, ceiling=False).emulator_partition_rate == "123"
    with pytest.raises(UsageError, match="--emulator-partition-rate 50: fixed when the process started"):
        check_start(env, settings, {"emulator_partition_rate": "50"}, ceiling=False)
    with pytest.raises(UsageError, match="--arrival-rate 5000 over 2 users"):
        check_start(env, settings, {"arrival_rate": "5000", "user_count": "2"}, ceiling=False)
    assert options.emulator_partition_rate == 123  # the run's options untouched by a check


def test_a_start_whose_values_break_a_user_classs_rule_is_refused_naming_the_class():
    """The form's entity size with a class's own batches: over the 4 MiB an entity group transaction holds."""
    from locust.env import Environment
    from locust.event import Events

    from loadtest.live.start_form import check_start
    from loadtest.running.users import TableUser

    class BatchUser(TableUser):
        mix = {"batch": 1}

    options = namespace(mix="read=100")  # the run's own mix has no batches: only the class's break the rule
    env = Environment(user_classes=[BatchUser], events=Events(), parsed_options=options)
    settings = Settings.from_options(options)
    assert check_start(env, settings, {"entity_size": "1024"}, ceiling=False).entity_size == "1024"
    with pytest.raises(UsageError, match="BatchUser: --batch-size 100 x --entity-size 65536"):
        check_start(env, settings, {"entity_size": "65536"}, ceiling=False)
