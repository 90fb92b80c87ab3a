import pytest

from loadtest.errors import UsageError
from loadtest.keys import row_key, validate_key


@pytest.mark.parametrize("key", ["", "hot", "orders-2026", "é" * 512, "a b", "x" * 512])
def test_valid_keys_pass(key):
    assert validate_key(key) == key


@pytest.mark.parametrize("char", ["/", "\\", "#", "?", "\x00", "\t", "\n", "\x1f", "\x7f", "\x9f"])
def test_forbidden_characters_are_refused_with_the_rule(char):
    with pytest.raises(UsageError, match=r"may not contain / \\ # \? or control characters"):
        validate_key(f"a{char}b")


def test_keys_over_1_kib_are_refused():
    with pytest.raises(UsageError, match="at most 1 KiB"):
        validate_key("x" * 513)


def test_row_keys_sort_lexically_in_numeric_order():
    keys = [row_key(i) for i in (1, 2, 10, 111, 2000)]
    assert keys == sorted(keys)
