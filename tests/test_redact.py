"""Secrets kept out of what icemaint prints and logs (`maintenance/redact.py`)."""

from __future__ import annotations

from maintenance.redact import redact_mapping


def test_redaction_of_urls_and_keys() -> None:
    redacted = redact_mapping({"uri": "postgresql://u:hunter2@h/db", "s3.secret-access-key": "abc", "nested": {"password": "x"}, "plain": "ok"})
    assert redacted == {"uri": "postgresql://u:***@h/db", "s3.secret-access-key": "***", "nested": {"password": "***"}, "plain": "ok"}
