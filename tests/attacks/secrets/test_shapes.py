"""Item 9 of the second hostile review (docs/records/review-issue-23.md): the secret scan
missed 20 of 21 newer credential shapes.

The labelled corpus is fixtures/secrets/corpus.tsv (bench/secret_scan.py measures
the scan and maintained scanners on it): every secret there is found, every
look-alike passes; promote and lint (`LooksLikeSecret`, on team notes) refuse the
issue's shapes."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from omh_git_memory.actions.promote import promote
from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.model.errors import PromoteRefused
from omh_git_memory.model.secret_scan import find_secrets
from tests.helpers import ROOT, commit_files, git, note_text, omh, promote_ready, remember_linked

CORPUS = ROOT / "fixtures" / "secrets" / "corpus.tsv"
_ESCAPE = re.compile(r"\\([nt\\])")


def _rows(label: str, family: str | None = None) -> list[tuple[str, str]]:
    rows = []
    for row in CORPUS.read_text(encoding="utf-8").splitlines():
        if row and not row.startswith("#"):
            got, fam, shape, text = row.split("\t", 3)
            if got == label and family in (None, fam):
                text = _ESCAPE.sub(lambda m: {"n": "\n", "t": "\t", "\\": "\\"}[m.group(1)],
                                   text)
                rows.append((f"{fam}/{shape}", text))
    return rows


SECRETS = _rows("secret")
ISSUE = _rows("secret", "issue23")
LOOKALIKES = _rows("benign")


def test_secret_the_corpus_holds_every_shape_the_issue_names() -> None:
    """The issue's list, each with at least one case, so that none is left untested."""
    shapes = " ".join(name for name, _ in ISSUE)
    for named in ("hvs.", "xapp-", "glrt-", "dckr_pat_", "GOCSPX-", "ya29.", "whsec_",
                  "age secret key", "ATATT", "PEM key body", "session cookie",
                  "URL password containing /", "short --password=", "redis-cli -a",
                  "base64 of a credentials file", "NRAK-", "tskey-", "sntrys_",
                  "wrapped over two lines"):
        assert named in shapes, named


@pytest.mark.parametrize(("shape", "text"), SECRETS, ids=[s for s, _ in SECRETS])
def test_secret_every_secret_of_the_corpus_is_found(shape: str, text: str) -> None:
    """A user promoting a note holding this shape would have pushed the credential to
    every clone of the repository (item 9)."""
    hits = find_secrets(f"before\n{text}\nafter\n")
    assert hits and 2 <= hits[0].line <= 2 + text.count("\n"), (shape, hits)


@pytest.mark.parametrize(("shape", "text"), LOOKALIKES, ids=[s for s, _ in LOOKALIKES])
def test_secret_no_look_alike_is_refused(shape: str, text: str) -> None:
    """A look-alike refused is a note promote would not share: a commit id, a hash,
    a placeholder, an environment variable's name (item 9)."""
    assert find_secrets(f"before\n{text}\nafter\n") == [], shape


def test_secret_a_token_wrapped_anywhere_in_it_is_found() -> None:
    """A token cut at any column (a note wrapped at 80 characters, a quoted reply)
    passed whole: each half alone is too short to be a token (item 9)."""
    token = "ghp_" + "a1B2c3D4e5" * 3 + "f6G7h8"
    for cut in range(1, len(token)):
        for prefix in ("", "  ", "> "):
            text = f"the token is {token[:cut]}\n{prefix}{token[cut:]} now\n"
            assert find_secrets(text), (cut, prefix)


def test_secret_new_shapes_scan_in_linear_time() -> None:
    """A note of hostile 100 KB lines built from the new shapes' pieces must not make
    promote or lint take minutes (a backtracking pattern would; item 9)."""
    units = ["M", "MIIB", "b3BlbnNzaC1rZXktdjE", "A/", "cookie: a_sess=", "x://:", "x://a:a/",
             "tskey-a-", "hvs.", "--password=", "redis-cli -a ", "Server=a;Password=",
             "a1", "aQ~", "xapp-", "ATATT3"]
    start = time.monotonic()
    for unit in units:
        line = unit * (100_000 // len(unit))
        find_secrets(line)
        find_secrets(f"{line[:50_000]}\n{line[:50_000]}")
    assert time.monotonic() - start < 60


def test_secret_promote_refuses_every_shape_of_the_issue(repo_dir: Path) -> None:
    """Promote (in process) refuses each of the issue's shapes, naming the note and
    its line, and commits nothing (item 9)."""
    promote_ready(repo_dir)
    ws = open_workspace(repo_dir)
    keys = []
    for number, (shape, text) in enumerate(ISSUE):
        key = f"surprise/secret-case-{number:02d}"
        (ws.local.root / "surprise").mkdir(parents=True, exist_ok=True)
        body = f"## Expected\ne\n\n## Observed\n{shape}\n\n## Evidence\n{text}\n\n" \
               "## Answers\n\n- q?\n"
        (ws.local.root / f"{key}.md").write_text(note_text(key, "surprise", body))
        keys.append(key)
    head = git(repo_dir, "rev-parse", "HEAD")
    with pytest.raises(PromoteRefused) as refused:
        promote(open_workspace(repo_dir), keys)
    problems = " ".join(refused.value.problems)
    for key, (shape, _) in zip(keys, ISSUE, strict=True):
        assert f"{key}: line " in problems and "looks like" in problems, shape
    assert git(repo_dir, "rev-parse", "HEAD") == head


def test_secret_lint_refuses_a_team_note_committed_by_hand(repo_dir: Path) -> None:
    """A team note committed with plain `git commit` (no promote) passed the
    pre-commit hook and CI (`lint --worktree` / `--ref`) with a token in it: lint had
    no secret rule. Now each issue shape is a LooksLikeSecret refusal, and the
    look-alikes pass (item 9)."""
    promote_ready(repo_dir)
    files: dict[str, str | None] = {}
    for number, (_, text) in enumerate(ISSUE):
        key = f"secret-case-{number:02d}"
        files[f".omh/notes/{key}.md"] = note_text(key, body=f"{text}\n")
    for number, (_, text) in enumerate(LOOKALIKES):
        key = f"lookalike-{number:03d}"
        files[f".omh/notes/{key}.md"] = note_text(key, body=f"{text}\n")
    commit_files(repo_dir, files, "notes by hand")
    for args in (["--ref", "HEAD"], ["--worktree"]):
        run = omh(repo_dir, "memory", "lint", *args, "--json")
        assert run.code == 1, run.err
        found = {f["key"] for f in run.json()["findings"] if f["rule"] == "LooksLikeSecret"}
        assert found == {f"secret-case-{n:02d}" for n in range(len(ISSUE))}, args


def test_secret_lint_does_not_scan_local_notes(repo_dir: Path) -> None:
    """A local note never leaves the machine and may hold a secret (docs/decisions.md):
    the new rule must not make `omh memory lint` fail on one (item 9)."""
    promote_ready(repo_dir)
    ws = open_workspace(repo_dir)
    (ws.local.root / "kept.md").write_text(
        note_text("kept", body="VAULT_TOKEN=hvs.CAESIabcdefghijklmnopqrstuvwxyz012345\n"))
    run = omh(repo_dir, "memory", "lint", "--json")
    assert not [f for f in run.json()["findings"] if f["rule"] == "LooksLikeSecret"]


# --- a secret carried by the note's KEY (outside review, newcomer) -------------------
# The slug lowercases a title and makes `_` a `-`, so a token in the first sentence of
# `observed` reached the key in a form no shape matched: promote refused the title
# line, the user reworded the body, and promote then committed the token in the team
# path `.omh/notes/surprise/….md` and in the commit subject; lint passed it.

AWS_KEY = "surprise/deploy-uses-aws-key-akiaqylpmn5hhhfpzam2-for-s3"
GITHUB_KEY = "surprise/upload-needs-token-ghp-1234567890abcdefghijklmnopqrstuvwxyzab"
TOKEN_KEYS = (
    AWS_KEY, GITHUB_KEY,
    "slack-xoxb-123456789012-1234567890123-abcdefghijklmnopqrstuvwx-bot",
    "vault-login-hvs-caesioxrw8wszj88z2qckmji2tw6jh6tj7ay",
    "surprise/runner-glrt-vw6gd4hxsrp6k-gav240z",
    "hub/hf-icbktakoyugznctigiloqhwhyvggjrbcug-push",
    "stripe/sk-live-4eC39HqLyjWDarjtT1zdp7dc",
    "age-secret-key-1pulvapl99qh3epc6xuu7h3qd8rmq8x8y5dwg80lwd43s453c3c8dh6xlur",
    "npm-npm-abcdefghijklmnopqrstuvwxyz0123456789-publish",
)


def _clean_local_note(repo_dir: Path, key: str) -> None:
    ws = open_workspace(repo_dir)
    path = ws.local.root / f"{key}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "## Expected\na\n\n## Observed\nDeploy uses an AWS key for S3.\n\n" \
           "## Evidence\naws config (redacted)\n\n## Answers\n\n- deploy creds\n"
    path.write_text(note_text(key, "surprise", body))


@pytest.mark.parametrize("key", [AWS_KEY, GITHUB_KEY])
def test_secret_promote_refuses_a_token_carried_only_by_the_key(repo_dir: Path,
                                                                key: str) -> None:
    """A note whose text is clean but whose key holds an AWS key id or a GitHub
    token was committed, the token in the team path and the commit subject
    (outside review A; item 9's class): promote refuses it, saying the key holds it
    and to rename the note first."""
    promote_ready(repo_dir)
    _clean_local_note(repo_dir, key)
    head = git(repo_dir, "rev-parse", "HEAD")
    with pytest.raises(PromoteRefused) as refused:
        promote(open_workspace(repo_dir), [key])
    problem = " ".join(refused.value.problems)
    assert "the key" in problem and "omh memory mv" in problem, problem
    assert git(repo_dir, "rev-parse", "HEAD") == head


@pytest.mark.parametrize("key", TOKEN_KEYS)
def test_secret_a_token_in_key_form_is_found(key: str) -> None:
    """Each token shape, lowercased and with `_` and `.` made `-` as the slug makes
    them, is still a token (outside review A)."""
    from omh_git_memory.model.secret_scan import find_secret_in_key
    assert find_secret_in_key(key), key


def test_secret_no_look_alike_is_refused_in_key_form() -> None:
    """A title holding a look-alike (a commit id, a hash, base64 of prose, a public
    key) gives a key that must still be promotable (outside review A: measured on
    the corpus; a bare long letters-and-digits word refused 24 of them)."""
    from omh_git_memory.model.keys import slug
    from omh_git_memory.model.secret_scan import find_secret_in_key
    texts = [text for _, text in LOOKALIKES] + [
        line for line in (CORPUS.parent / "lookalikes.txt").read_text().splitlines() if line]
    refused = [text for text in texts if find_secret_in_key(slug(text))]
    assert refused == []


def test_secret_remember_keeps_a_token_out_of_the_key_it_derives(repo_dir: Path) -> None:
    """`remember` derived `surprise/deploy-uses-aws-key-akia…-for-s3` from the
    observed text; the key is kept by every later step. Now the token's words are
    left out of the slug (the text keeps them, for promote to refuse) (outside
    review A)."""
    promote_ready(repo_dir)
    for observed, expected in (
            ("Deploy uses AWS key AKIAQYLPMN5HHHFPZAM2 for S3. Yes.",
             "surprise/deploy-uses-aws-key-for-s3"),
            ("Upload needs token ghp_1234567890abcdefghijklmnopqrstuvwxyzab. Yes.",
             "surprise/upload-needs-token")):
        assert remember_linked(repo_dir, observed) == expected
    run = omh(repo_dir, "memory", "remember", "--type", "topic", "--title",
              "Vault hvs.CAESIoXrW8wSzJ88z2QCkmJI2TW6JH6tJ7aY login", "--section",
              "Notes=x", "--answers", "q?", "--json")
    assert run.code == 0, run.err
    assert run.json()["key"] == "vault-login"


def test_secret_lint_refuses_a_team_key_holding_a_token(repo_dir: Path) -> None:
    """A team note committed by hand at a path holding a token passed `lint --ref
    HEAD` (LooksLikeSecret read the text only) (outside review A)."""
    promote_ready(repo_dir)
    key = GITHUB_KEY
    commit_files(repo_dir, {f".omh/notes/{key}.md": note_text(key, body="clean\n")}, "by hand")
    for args in (["--ref", "HEAD"], ["--worktree"]):
        run = omh(repo_dir, "memory", "lint", *args, "--json")
        assert run.code == 1, run.err
        found = [f for f in run.json()["findings"] if f["rule"] == "LooksLikeSecret"]
        assert [f["key"] for f in found] == [key], args
        assert "omh memory mv" in found[0]["message"]


def test_secret_mv_refuses_a_team_key_holding_a_token(repo_dir: Path) -> None:
    """`omh memory mv` of a team note to a key holding a token would commit it as the
    path and the commit subject; and renaming away from one named the old key in
    the commit message (outside review A)."""
    from omh_git_memory.actions.rename import rename
    from omh_git_memory.model.errors import RenameRefused
    promote_ready(repo_dir)
    commit_files(repo_dir, {".omh/notes/deploy.md": note_text("deploy", body="clean\n")})
    head = git(repo_dir, "rev-parse", "HEAD")
    with pytest.raises(RenameRefused) as refused:
        rename(open_workspace(repo_dir), "deploy", GITHUB_KEY)
    assert "a GitHub token" in str(refused.value)
    assert git(repo_dir, "rev-parse", "HEAD") == head
    commit_files(repo_dir, {f".omh/notes/{AWS_KEY}.md": note_text(AWS_KEY, body="x\n")})
    rename(open_workspace(repo_dir), AWS_KEY, "surprise/deploy-uses-aws-key-for-s3")
    assert "akiaqylpmn5hhhfpzam2" not in git(repo_dir, "log", "-1", "--format=%B")
