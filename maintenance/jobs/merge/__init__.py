"""MERGE: apply deletes into data files and drop the delete files, sequence numbers kept."""
