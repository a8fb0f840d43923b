"""MANIFESTS's own counters: the ones no other job reports (the rule: `jobs/counters.py`)."""

COUNTERS: dict[str, str] = {
    "manifests_planned": "manifests the plan rewrites",
    "manifest_bytes_planned": "bytes of those manifests",
    "manifests_rewritten": "manifests replaced",
    "manifests_added": "manifests written in their place",
    "spec_ids_planned": "the partition specs whose manifests a dry run would rewrite",
}
