"""Leases at work: the keeper that renews a job's lease and the fence every effect passes."""
