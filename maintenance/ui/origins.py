"""Every setting of the policy a table gets, with where it came from: the policy file and
line, or the table property that overrides it (the same resolution `policy_for` applies)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from maintenance.catalogs import TableRef
from maintenance.policy.loader import (
    PROPERTY_PREFIX,
    deep_merge,
    overrides_from_properties,
)
from maintenance.policy.model import Policy, TablePolicy
from maintenance.policy.resolve import policy_for


@dataclass(frozen=True)
class Setting:
    key: str  # `merge.when.delete_ratio`, `select.namespaces`, `icemaint.enabled`
    value: str
    origin: str  # `/etc/icemaint/policies/default.yaml:14` or `table property icemaint.merge.every`
    replaces: str | None = None  # the policy's own value and its origin, when a table property overrides it


@dataclass(frozen=True)
class PolicyView:
    resolved: TablePolicy
    policy: Policy | None  # the file's policy; None when no policy selects the table
    chosen_by: str
    settings: list[Setting]


def policy_view(ref: TableRef, properties: dict[str, str], policies: list[Policy]) -> PolicyView:
    """Raises PolicyError exactly where the planner would (a bad table property)."""
    resolved = policy_for(ref, properties, policies)
    own, nested = overrides_from_properties(properties)
    policy = next((p for p in policies if p.name == resolved.policy), None)
    settings = [Setting(key, value, f"table property {key}") for key, value in sorted(own.items()) if key in (f"{PROPERTY_PREFIX}enabled", f"{PROPERTY_PREFIX}policy")]
    if policy is None:
        return PolicyView(resolved, None, "no policy's selector matches the table", settings)
    if f"{PROPERTY_PREFIX}policy" in own:
        chosen_by = f"table property {PROPERTY_PREFIX}policy"
    else:
        chosen_by = f"its selector ({_where(policy, ('select',))}), the highest priority ({policy.priority}) that matches"
    for key in ("catalogs", "namespaces", "tables"):
        if ("select", key) in policy.lines:
            settings.append(Setting(f"select.{key}", _text(getattr(policy.selector, key)), _where(policy, ("select", key))))
    merged = deep_merge(policy.raw_jobs, nested)
    for path, value in _leaves(merged):
        from_table = _lookup(nested, path)
        if from_table is not _ABSENT:
            original = _lookup(policy.raw_jobs, path)
            replaces = None if original is _ABSENT else f"{_text(original)} from {_where(policy, ('jobs', *path))}"
            settings.append(Setting(".".join(path), _text(value), f"table property {PROPERTY_PREFIX}{'.'.join(path)}", replaces))
        else:
            settings.append(Setting(".".join(path), _text(value), _where(policy, ("jobs", *path))))
    return PolicyView(resolved, policy, chosen_by, settings)


_ABSENT = object()


def _leaves(node: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    if isinstance(node, dict) and node:
        out = []
        for key, value in node.items():
            out.extend(_leaves(value, (*path, str(key))))
        return out
    return [(path, node)] if path else []


def _lookup(node: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return _ABSENT
        node = node[part]
    return node


def _where(policy: Policy, path: tuple[str, ...]) -> str:
    for depth in range(len(path), -1, -1):  # the nearest key that has a line
        line = policy.lines.get(path[:depth])
        if line is not None:
            return f"{policy.source}:{line}"
    return policy.source


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ", ".join(_text(v) for v in value)
    if value is None or value == {}:
        return "(defaults)"
    return str(value)
