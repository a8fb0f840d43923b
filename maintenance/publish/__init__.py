"""The publishing stage: a job's change staged, verified, then made current, or nothing.

- `publisher`: a change (`Change`) staged, verified and published, or committed directly
  without verification.
- `verifier`: compares a staged snapshot with its parent as the change's proof says.
- `proofs/`: every proof, one module each (`proofs/__init__.py` lists them, with
  `Verification`, what a run's verification said and read).
- `change_scope`: which data files a change can affect (and why reading them proves the table).
- `read_ahead`: the parent's side read while the change is still being written.
- `claim`: a table claimed for this run's lease without the JVM.
"""
