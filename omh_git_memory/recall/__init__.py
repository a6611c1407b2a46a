"""Recall: the words of a note, the per-commit index, ranking, and the optional
semantic model."""
