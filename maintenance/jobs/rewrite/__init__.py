"""REWRITE: combine position delete files, at most one per partition and target size."""
