"""Keep secrets out of logs and output.

A key is secret when its name says so (password, secret, token, credential, key);
URLs lose their password part. Used on every config and property map we log.

Besides these rules by shape, the configuration registers every secret value it holds
(`remember_secret`: values of secret keys, passwords in URLs, whatever `${VAR}` brought in
for a secret key or from a variable named like one), and `redact_text` replaces them
wherever they appear: in error messages that quote a value, in a Java exception's text,
in a rendered traceback. The log's processor and the CLI's one error line both pass
everything through it.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from typing import Any

REDACTED = "***"

_SECRET_KEY = re.compile(r"(pass(word)?|secret|token|credential|private|(^|[._-])key$|access[._-]?key|api[._-]?key|pwd?$)", re.I)
_URL_PASSWORD = re.compile(r"(?P<head>[a-z][a-z0-9+.-]*://[^:/@\s]+:)(?P<pw>[^@\s]+)(?P<at>@)", re.I)
_QUERY_SECRET = re.compile(r"(?P<k>(password|secret|token|credential)=)(?P<v>[^&\s]+)", re.I)


_MIN_SECRET_LENGTH = 4  # shorter values would redact ordinary words
_secrets: set[str] = set()
_secrets_lock = threading.Lock()


def is_secret_key(key: str) -> bool:
    return bool(_SECRET_KEY.search(key))


def remember_secret(value: str) -> None:
    """A value that must never be shown (it is redacted wherever it appears)."""
    if len(value) >= _MIN_SECRET_LENGTH:
        with _secrets_lock:
            _secrets.add(value)


def url_password(text: str) -> str | None:
    match = _URL_PASSWORD.search(text)
    return match.group("pw") if match else None


def redact_text(text: str) -> str:
    """Strip passwords embedded in URLs and query strings, and every remembered secret."""
    text = _URL_PASSWORD.sub(lambda m: m.group("head") + REDACTED + m.group("at"), text)
    text = _QUERY_SECRET.sub(lambda m: m.group("k") + REDACTED, text)
    for secret in sorted(_secrets, key=len, reverse=True):  # a secret containing another goes whole
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def redact_value(value: Any) -> Any:
    """Strings (also inside lists, tuples and mappings) redacted; anything else as it is."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, Mapping):
        return {k: redact_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact_value(v) for v in value)
    return value


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


def holds_secret(key: str, value: str) -> bool:
    """Whether a setting carries a secret: by its key's name, or a remembered secret (or a
    URL password) in its value."""
    if is_secret_key(key.rsplit(".", 1)[-1]) or is_secret_key(key):
        return True
    if url_password(value) is not None:
        return True
    with _secrets_lock:
        return any(secret in value for secret in _secrets)


def is_remembered_secret(value: str) -> bool:
    with _secrets_lock:
        return value in _secrets
