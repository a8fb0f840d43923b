"""Choosing due jobs within a budget (`schedule/budget.py`) and the last hour's spending."""

from __future__ import annotations

from maintenance.catalogs import TableRef
from maintenance.schedule.budget import BY_TRIGGERS, WINDOW_S, Spending, choose, fleet_part
from maintenance.schedule.decisions import Decision
from maintenance.schedule.value import ASSUMED, REPORTED, UPKEEP, Prediction
from maintenance.table.reader_cost import NO_COST


def due(table: str, job: str, cost_s: float, benefit: float, basis: str = REPORTED) -> Decision:
    decision = Decision(TableRef("c", ("ns",), table), job, True, "triggered", "p", NO_COST, cost_s)
    decision.prediction = Prediction(cost_s, benefit, 10.0, basis, 1.0)
    return decision


def picked(choices: list) -> list[tuple[str, str]]:  # type: ignore[type-arg]
    return [(c.decision.ref.name, c.decision.job) for c in choices if c.chosen]


def test_the_best_value_first_while_it_fits_and_upkeep_keeps_its_share() -> None:
    jobs = [
        due("cold", "merge", 10, 1.0, ASSUMED),  # the planner's first: 0.1 reader-s a day per second
        due("hot", "merge", 40, 400.0),  # 10 a second
        due("warm", "compact", 20, 100.0),  # 5 a second
        due("unread", "merge", 5, 0.0),  # read by nobody
        due("hot", "expire", 15, 0.0, UPKEEP),
        due("cold", "orphans", 10, 0.0, UPKEEP),
    ]

    choices = choose(jobs, 100.0)  # upkeep: 20 s of it (UPKEEP_SHARE)

    assert picked(choices) == [("hot", "expire"), ("hot", "merge"), ("warm", "compact"), ("cold", "merge")]
    why = {(c.decision.ref.name, c.decision.job): c.why for c in choices if not c.chosen}
    assert why[("cold", "orphans")].startswith("upkeep does not fit: 10s predicted, 5.0s of its share left")
    assert why[("unread", "merge")].startswith("saves readers nothing")


def test_what_upkeep_leaves_goes_to_readers_and_nothing_fits_in_nothing() -> None:
    jobs = [due("a", "merge", 95, 10.0), due("b", "stats", 5, 0.0, UPKEEP)]

    assert picked(choose(jobs, 100.0)) == [("b", "stats"), ("a", "merge")]  # upkeep used 5 of its 20
    assert picked(choose(jobs, 0.0)) == []
    assert [c.why.split(":")[0] for c in choose(jobs, 0.0)] == ["upkeep does not fit", "does not fit"]


def test_a_job_larger_than_the_whole_budget_runs_alone_only_in_an_hour_that_spent_nothing() -> None:
    """A first prediction is a job's rough estimate: were it larger than the whole budget, no
    job would ever run and none would be calibrated."""
    jobs = [due("unread", "merge", 500, 0.0), due("a", "merge", 300, 10.0), due("b", "merge", 200, 50.0), due("c", "expire", 400, 0.0, UPKEEP)]

    fresh = choose(jobs, 100.0, whole_s=100.0)
    spent = choose(jobs, 99.0, whole_s=100.0)

    assert picked(fresh) == [("c", "expire")]  # upkeep comes first, alone
    assert fresh[0].why.startswith("larger than the whole budget (6m40s predicted, 1m40s an hour)")
    assert picked(spent) == []  # the hour spent something: it waits for an hour that did not
    assert picked(choose(jobs[:3], 100.0, whole_s=100.0)) == [("b", "merge")]  # the best value; never one that saves readers nothing
    assert picked(choose([*jobs[:2], due("d", "merge", 50, 1.0)], 100.0, whole_s=100.0)) == [("d", "merge")]  # something fits: the rule is not needed


def test_in_the_triggers_order_the_planners_first_fit_and_readers_are_not_asked() -> None:
    jobs = [
        due("cold", "merge", 50, 1.0, ASSUMED),  # the planner's first
        due("hot", "merge", 40, 400.0),
        due("unread", "merge", 5, 0.0),  # read by nobody: today's triggers do not know
        due("warm", "compact", 20, 100.0),
        due("hot", "expire", 15, 0.0, UPKEEP),
    ]

    choices = choose(jobs, 100.0, BY_TRIGGERS)

    assert picked(choices) == [("hot", "expire"), ("cold", "merge"), ("unread", "merge"), ("warm", "compact")]  # 15 + 50 + 5 + 20; hot's 40 does not fit in 10
    assert [c.why for c in choices if c.chosen][1:] == ["the planner's order"] * 3
    assert [c.why.split(":")[0] for c in choices if not c.chosen] == ["does not fit"]


def test_a_decision_without_a_prediction_is_upkeep_at_its_estimate() -> None:
    bare = Decision(TableRef("c", ("ns",), "t"), "merge", True, "triggered", "p", NO_COST, 3.0)

    [choice] = choose([bare], 100.0)

    assert choice.chosen and choice.prediction.basis == UPKEEP and choice.prediction.cost_s == 3.0


def test_spending_counts_the_last_hour_and_what_runs() -> None:
    now = [1000.0]
    spending = Spending(clock=lambda: now[0])
    spending.start("a merge", 30.0)
    assert spending.spent() == 30.0
    spending.settle("a merge", 42.0)
    spending.start("b merge", 10.0)
    assert spending.spent() == 52.0
    now[0] += WINDOW_S + 1
    assert spending.spent() == 10.0  # the ended run left the window; the running one stays


def test_each_daemon_spends_its_part_of_the_fleets_budget() -> None:
    """A daemon holding 50 tables of a catalog shared by 4 daemons, and 10 of one it has to
    itself, holds about 60 of 210 tables."""
    from maintenance.schedule.membership import ALONE, Share

    assert fleet_part({"lake": Share(2, 4), "local": ALONE}, {"lake": 50, "local": 10}) == 60 / 210
    assert fleet_part({}, {"lake": 7}) == 1.0 and fleet_part({"lake": Share(0, 3)}, {}) == 1.0
