"""`KeySet`: the same answers held in memory and spilled to its SQLite file, whatever the
order of adds, reads and removals; and the spill happens past the budget, not before."""

from __future__ import annotations

import random
import threading

import pytest

from maintenance.table.key_set import KeySet


def _keys(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    stores = ["/w/t/data", "s3://bucket/t/data", "s3://bucket2/t", "hdfs://nn:8020/t"]
    return [f"{rng.choice(stores)}/p={rng.randrange(50)}/f-{rng.randrange(10**9):09d}.parquet" for _ in range(n)]


def test_it_stays_in_memory_within_its_budget_and_spills_past_it() -> None:
    keys = _keys(2_000)
    small, large = KeySet(50_000), KeySet(10 * 1024**2)
    small.update(keys)
    large.update(keys)
    assert small.spilled and not large.spilled
    assert len(small) == len(large) == len(set(keys))


@pytest.mark.parametrize("budget", [10 * 1024**2, 20_000, 0], ids=["held", "spills-midway", "spilled-from-the-first"])
def test_answers_match_a_python_set(budget: int) -> None:
    """A model (a plain set) against the key set, through interleaved adds, duplicate adds,
    lookups, batch lookups, removals and iteration (more adds than the post-spill buffer)."""
    rng = random.Random(budget)
    model: set[str] = set()
    found = KeySet(budget)
    pool = _keys(120_000, seed=budget)
    for step in range(12):
        batch = rng.sample(pool, 10_000) + rng.sample(sorted(model), min(len(model), 500))  # some keys again
        if step % 3 == 0:
            for key in batch:
                found.add(key)
        else:
            found.update(batch)
        model.update(batch)
        probe = rng.sample(pool, 2_000) + ["/not/a/key", "s3://bucket/t/data"]
        assert found.present(probe) == {key for key in probe if key in model}
        assert all((key in found) == (key in model) for key in probe[:200])
        if step % 4 == 3:
            gone = rng.sample(sorted(model), 3_000) + ["/never/added"]
            found.discard_present(gone)
            model.difference_update(gone)
        assert len(found) == len(model)
    assert sorted(found) == sorted(model)
    assert sorted(found.outside("s3://bucket/")) == sorted(k for k in model if not k.startswith("s3://bucket/"))
    assert sorted(found.outside("/")) == sorted(k for k in model if not k.startswith("/"))
    assert found.spilled == (budget < 10 * 1024**2)
    found.close()
    assert len(found) == 0 and "/w/t/data/p=1/x" not in found


def test_keys_with_quotes_newlines_and_non_ascii_are_keys_like_any_other() -> None:
    odd = ["/t/data/it's.parquet", "/t/data/a\nb.parquet", "/t/data/%20 ü€.parquet", "/t/data/a?b#c", "s3://b/t/'; DROP TABLE keys; --"]
    found = KeySet(0)
    found.update(odd)
    assert found.present([*odd, "/t/data/other"]) == set(odd)
    assert sorted(found) == sorted(odd)


def test_concurrent_adds_and_lookups_lose_nothing() -> None:
    """Manifests are read on a pool, and a deletion's workers ask while the caller adds."""
    found = KeySet(30_000)
    parts = [_keys(20_000, seed=s) for s in range(4)]
    threads = [threading.Thread(target=found.update, args=(part,)) for part in parts]
    threads.append(threading.Thread(target=lambda: [k in found for k in parts[0][:3_000]]))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    everything = {key for part in parts for key in part}
    assert found.spilled and len(found) == len(everything)
    assert found.present(sorted(everything)) == everything
