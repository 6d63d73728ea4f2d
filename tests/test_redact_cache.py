"""The tracer remembers texts its redaction rules found clean (tracer/redact.py): the same answers, less work."""

from __future__ import annotations

from graphtrail.tracer import redact as R
from graphtrail.tracer._content import clean_text


def test_a_clean_text_is_remembered_and_a_secret_never_is() -> None:
    R.clear_scan_cache()
    clean = "Kenya's currency is the Kenyan shilling (E3), see E1."
    secret = "call it with api_key=sk-live-1234567890abcdef1234 please"
    for _ in range(3):  # the second and third calls answer from the cache for the clean text only
        assert clean_text(clean, 4096) == clean
        out = clean_text(secret, 4096)
        assert "sk-live-1234567890abcdef1234" not in out and R.REDACTED in out
    assert clean in R._clean
    assert all("sk-live" not in text for text in R._clean)  # the cache holds no secret


def test_the_cache_is_bounded_and_emptied_when_full(monkeypatch) -> None:
    R.clear_scan_cache()
    monkeypatch.setattr(R, "_CLEAN_MAX_CHARS", 1000)
    for i in range(200):
        R.redact_text_builtin(f"plain text number {i:04d} with nothing in it")
    assert 0 < R._clean_chars <= 1000
    assert sum(map(len, R._clean)) == R._clean_chars
    long = "x " * (R._CLEAN_MAX_TEXT + 10)
    R.redact_text_builtin(long)
    assert long not in R._clean  # long texts are scanned each time, not kept


def test_a_users_rule_still_sees_every_text() -> None:
    seen: list[str] = []

    def rule(key, value):
        seen.append(value)
        return value.replace("Nairobi", "<city>") if isinstance(value, str) else value

    R.set_rule(rule)
    try:
        R.clear_scan_cache()
        for _ in range(2):
            assert R.redact_text("the capital is Nairobi") == "the capital is <city>"
    finally:
        R.set_rule(None)
    assert seen == ["the capital is Nairobi"] * 2


def test_a_str_subclass_is_scanned_not_looked_up() -> None:
    class Odd(str):
        def __eq__(self, other: object) -> bool:  # equal to everything
            return True

        def __hash__(self) -> int:  # ... and hashed like the clean text cached below
            return hash("a clean sentence about Nairobi")

    R.clear_scan_cache()
    R.redact_text_builtin("a clean sentence about Nairobi")
    secret = Odd("a clean sentence about Nairobi password=hunter2")
    assert "hunter2" not in R.redact_text_builtin(secret)
    assert not any(type(t) is not str for t in R._clean)
