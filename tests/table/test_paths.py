"""Path keys: the fast spelling rule for plain local paths gives exactly the key the general
(parsing) rule gives, on any path."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from maintenance.table.paths import _parsed_key, _plain_local, normalise

PREFIXES = st.sampled_from(["/", "file:/", "file://", "file:///", "file:////", "FILE:///", "", "s3://b/", "hdfs://nn/"])
BODIES = st.text(alphabet="ab/%#?:.F=+-_ é", max_size=16)


@settings(max_examples=3000)
@given(PREFIXES, BODIES)
def test_the_fast_rule_agrees_with_the_parsing_rule_wherever_it_answers(prefix: str, body: str) -> None:
    path = prefix + body
    fast = _plain_local(path)
    if fast is not None:
        assert fast == _parsed_key(path)
    assert normalise(path) == (fast if fast is not None else _parsed_key(path))


def test_plain_local_spellings_take_the_fast_rule() -> None:
    for path in ("/w/t/data/a.parquet", "file:/w/t/data/a.parquet", "file:///w/t/data/a.parquet"):
        assert _plain_local(path) == "/w/t/data/a.parquet"
    assert _plain_local("file:///w/t/data/") == "/w/t/data"
    for path in ("file:///w/a%20b", "file:///w//a", "file:///w/a#b", "s3://b/k", "file://host/w"):
        assert _plain_local(path) is None
