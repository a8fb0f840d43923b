"""`where`: the partitions a predicate on the table's rows may touch.

MERGE and COMPACT take a `where` predicate (`region = 3 AND day >= '2026-11-01'`, in the
SQL that pyiceberg's expression parser reads: comparisons, IN, IS NULL, LIKE 'prefix%',
AND/OR/NOT). A file is in scope when its partition *may* hold a matching row: the
predicate is projected onto each partition spec inclusively (Iceberg's rule: a partition
the projection rejects holds no matching row) and evaluated on the file's partition
values, as Iceberg's scan planning does. So a predicate on columns no partition is derived
from selects every partition (an inclusive projection of it is always true); a rewrite
then takes whole files and whole file groups, never part of one, and what it writes is the
content those files had. Nothing is pruned by column statistics: a missing or truncated
statistic must never leave a file out of a delete's rewrite (MERGE's plan needs every file
a delete applies to, and takes them all whatever the predicate).

One rule, used by both jobs' plans (`jobs/merge/plan.py`, `jobs/compact/plan.py`); the
predicate is bound to the table's current schema when the plan is made, and a predicate
that does not parse or names no column of the table is the user's error (exit 2).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from pyiceberg.expressions import AlwaysTrue, BooleanExpression
from pyiceberg.expressions.parser import parse
from pyiceberg.expressions.visitors import bind, expression_evaluator, inclusive_projection
from pyiceberg.partitioning import PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.typedef import Record

from maintenance.errors import PredicateError
from maintenance.table.files import TableFile

SYNTAX = "comparisons such as region = 3, region IN (1, 2), name LIKE 'a%' or day >= '2026-11-01', joined by AND, OR and NOT"


def syntax_error(text: str, exc: Exception) -> str:
    """Why `text` does not parse, in one short line: where pyparsing stopped and what a
    predicate looks like (its own message spells out the whole grammar, hundreds of
    characters, on the terminal)."""
    loc = getattr(exc, "loc", None)
    if not isinstance(loc, int) or not 0 <= loc <= len(text):
        return f"{text!r} does not parse: write {SYNTAX}"
    at = f"{text[loc:]!r}" if loc < len(text) else "the end"
    return f"{text!r} does not parse at column {loc + 1} ({at}): write {SYNTAX}"


def parse_where(where: str, schema: Schema) -> BooleanExpression:
    """The predicate, checked against the table's schema (case-insensitive, as Spark SQL)."""
    try:
        expression = parse(where)
    except Exception as exc:  # noqa: BLE001 (pyparsing's errors: where it stopped is all that matters)
        raise PredicateError(f"where {syntax_error(where, exc)}") from None
    try:
        bind(schema, expression, case_sensitive=False)
    except Exception as exc:  # noqa: BLE001 (pyiceberg's ValueError and its own: a column or a literal that does not fit)
        raise PredicateError(f"where '{where}': {str(exc).splitlines()[0]}") from None
    return expression


def check_where(where: str | None, schema: Schema) -> None:
    """A job's `check_table`: the predicate fits the table (a PredicateError, exit 2, if not)."""
    if where:
        parse_where(where, schema)


def scope_words(partitions: tuple[str, ...], where: str | None, preposition: str) -> str:
    """How a plan's "nothing to do" names what it was limited to (` in region=3, where …`)."""
    scope = [*partitions, *([f"where {where}"] if where else [])]
    return f" {preposition} {', '.join(scope)}" if scope else ""


def partition_matcher(where: str | None, schema: Schema, specs: dict[int, PartitionSpec]) -> Callable[[TableFile], bool]:
    """Whether a file's partition may hold a row matching `where` (every file when None)."""
    if not where:
        return lambda file: True
    expression = parse_where(where, schema)

    @cache
    def evaluator(spec_id: int) -> Callable[[Record], bool]:
        spec = specs[spec_id]
        try:
            projected = inclusive_projection(schema, spec, case_sensitive=False)(expression) if spec.fields else AlwaysTrue()
            partition_schema = Schema(*spec.partition_type(schema).fields)
        except (ValueError, KeyError):  # an older spec on a column the schema no longer has: it may hold anything
            return lambda partition: True
        if projected == AlwaysTrue():
            return lambda partition: True
        return expression_evaluator(partition_schema, projected, case_sensitive=False)

    return lambda file: evaluator(file.spec_id)(Record(*file.partition))
