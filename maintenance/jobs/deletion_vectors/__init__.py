"""Deletion vectors (format 3), the engine CONVERT and REWRITE share (not a job): one complete
DV per data file (`build`)."""
