"""Secrets out of every output."""

from loadtest.redact import AZURITE_KEY, redact


def test_redact_removes_keys_and_signatures():
    text = f"AccountKey={AZURITE_KEY};x AccountKey=abc123; https://a/t?sv=1&sig=s3cr3t&se=2 SharedAccessSignature=sv=1&sig=zz"
    cleaned = redact(text)
    for secret in (AZURITE_KEY, "abc123", "s3cr3t", "sig=zz"):
        assert secret not in cleaned
