"""The run machinery above the jobs: one run of one job on one table.

- `runner`: the lease, the re-check, the plan, the job's run and the run record, once for
  every job (the only way icemaint changes a table).
- `context`: what a job's run gets (`JobContext`), the one owner of every effect it makes.
- `outcome`: what a job hands back (`JobOutcome`) and what a run reports (`JobResult`).
- `phases`: where a run's time goes (`phase_seconds`).
- `compute`: what a run cost in compute-seconds (`compute_s`: its Spark tasks' and threads' CPU).
- `step_record`: the progress step a running run shows in its record (the status page).
- `output_folder`: where a run's own Spark output waits before it is published.

A job's modules see only `context` and `outcome` (and `output_folder` for ORPHANS, which
recognises those folders); the runner reaches the jobs only through `jobs/registry.py`.
"""
