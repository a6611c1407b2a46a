"""The repository: git access through libgit2, git's own plain files, who a commit is
by, and the one write path that never follows a symlink."""
