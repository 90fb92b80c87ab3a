"""Secrets out of every output."""

from helpers import run_info
from synthetic import recorded

from loadtest.findings.assess import assess
from loadtest.redact import AZURITE_KEY, public_url, redact
from loadtest.report import render
from loadtest.summary import build


def test_redact_removes_keys_and_signatures():
    text = f"AccountKey={AZURITE_KEY};x AccountKey=abc123; https://a/t?sv=1&sig=s3cr3t&se=2 SharedAccessSignature=sv=1&sig=zz"
    cleaned = redact(text)
    for secret in (AZURITE_KEY, "abc123", "s3cr3t", "sig=zz"):
        assert secret not in cleaned


def test_public_url_keeps_the_endpoint_and_drops_a_sas_and_user_info():
    assert public_url("https://acct.table.core.windows.net/?sv=2022-11-02&sig=s3cr3t") == "https://acct.table.core.windows.net/"
    assert public_url("http://me:pw@127.0.0.1:10002/devstoreaccount1?sig=x#frag") == "http://127.0.0.1:10002/devstoreaccount1"
    assert public_url("http://127.0.0.1:10002/devstoreaccount1") == "http://127.0.0.1:10002/devstoreaccount1"


def test_a_sas_in_any_value_of_a_report_is_redacted_before_the_page_escapes_it(tmp_path):
    """Escaped, ``&sig=`` reads ``&amp;sig=``: redaction after escaping would let the signature through."""
    secret = "pl4nt3dS1gnature"
    sas = f"https://acct.table.core.windows.net/?sv=2022-11-02&ss=t&sig={secret}"
    seconds = {t: [{"op": "read", "entities": 5}] for t in range(4)}
    info = run_info(endpoint=sas, settings={"account_url": sas, "note": f"AccountKey={secret};"})
    page = render(assess(build(recorded(seconds), info)), tmp_path).read_text()
    assert secret not in page and "sig=***" in page
