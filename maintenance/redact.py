"""Keep secrets out of logs and output.

A key is secret when its name says so (password, secret, token, credential, key);
URLs lose their password part. Used on every config and property map we log.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

REDACTED = "***"

_SECRET_KEY = re.compile(r"(pass(word)?|secret|token|credential|private|(^|[._-])key$|access[._-]?key|api[._-]?key)", re.I)
_URL_PASSWORD = re.compile(r"(?P<head>[a-z][a-z0-9+.-]*://[^:/@\s]+:)(?P<pw>[^@\s]+)(?P<at>@)", re.I)
_QUERY_SECRET = re.compile(r"(?P<k>(password|secret|token|credential)=)(?P<v>[^&\s]+)", re.I)


def is_secret_key(key: str) -> bool:
    return bool(_SECRET_KEY.search(key))


def redact_text(text: str) -> str:
    """Strip passwords embedded in URLs and query strings."""
    text = _URL_PASSWORD.sub(lambda m: m.group("head") + REDACTED + m.group("at"), text)
    return _QUERY_SECRET.sub(lambda m: m.group("k") + REDACTED, text)


def redact_mapping(values: Mapping[str, Any]) -> dict[str, Any]:
    """A copy safe to log: secret keys masked, URLs without passwords, nested maps too."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        if is_secret_key(str(key)):
            out[key] = REDACTED
        elif isinstance(value, Mapping):
            out[key] = redact_mapping(value)
        elif isinstance(value, str):
            out[key] = redact_text(value)
        else:
            out[key] = value
    return out
