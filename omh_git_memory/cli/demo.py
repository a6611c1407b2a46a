"""`omh demo`: a walk-through on a throw-away repository.

Builds a git repository from the bundled fixtures, points the local store at a
temporary directory, and runs the real `omh` commands one after another,
printing each with its output.
"""
