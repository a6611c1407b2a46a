"""A second real history for bench/citation_history.py: a project's releases, one
commit each, made from the source distributions it published on PyPI.

    python bench/release_history.py typer /tmp/typer-history [--releases 60]
    python bench/citation_history.py --repo /tmp/typer-history

This machine reaches no git host, only package registries, so the one commit-by-commit
history at hand is omh's own. A project's source distributions, taken in the order
they were uploaded, are a real history too, only coarser: each commit holds one
release's files as published (the sdist's top folder stripped), dated by its upload,
and its message names the version. Pre-releases and releases without an sdist are
skipped. Archives are unpacked with tarfile's `data` filter (no links out, no
absolute paths, no device files); zip sdists are skipped. Needs network access to
pypi.org; nothing is installed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import re
import tarfile
import urllib.parse
import urllib.request
from pathlib import Path

import pygit2

_PRE = re.compile(r"[a-zA-Z]")  # 1.0a1, 2.0rc1, 0.3.dev0: not a final release


def releases(package: str) -> list[tuple[str, str, dt.datetime]]:
    """(version, sdist URL, upload time) of each final release with a .tar.gz sdist,
    oldest first."""
    where = f"https://pypi.org/pypi/{package}/json"
    with urllib.request.urlopen(where, timeout=60) as r:
        meta = json.load(r)
    found = []
    for version, files in meta["releases"].items():
        if _PRE.search(version):
            continue
        for f in files:
            if f["packagetype"] == "sdist" and f["filename"].endswith(".tar.gz"):
                when = dt.datetime.fromisoformat(f["upload_time_iso_8601"].replace("Z", "+00:00"))
                # A mirror may give the file's address relative to the page.
                found.append((version, urllib.parse.urljoin(where, f["url"]), when))
                break
    return sorted(found, key=lambda v: v[2])


def unpack(url: str) -> dict[str, bytes]:
    """The regular files of the sdist at `url`, by path below its top folder."""
    with urllib.request.urlopen(url, timeout=120) as r:
        raw = r.read()
    files: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(raw), mode="r:gz") as tar:
        for member in tar.getmembers():
            member = tarfile.data_filter(member, "/nonexistent")
            if not member.isfile():
                continue
            parts = member.name.split("/", 1)
            if len(parts) != 2 or not parts[1]:
                continue
            handle = tar.extractfile(member)
            if handle is not None:
                files[parts[1]] = handle.read()
    return files


def commit_release(repo: pygit2.Repository, files: dict[str, bytes], version: str,
                   when: dt.datetime) -> None:
    index = pygit2.Index()
    for path, data in sorted(files.items()):
        index.add(pygit2.IndexEntry(path, repo.create_blob(data), pygit2.enums.FileMode.BLOB))
    tree = index.write_tree(repo)
    stamp = int(when.timestamp())
    sig = pygit2.Signature("PyPI release", "release@pypi.invalid", stamp, 0)
    parents = [] if repo.head_is_unborn else [repo.head.target]
    repo.create_commit("HEAD", sig, sig, f"release {version}\n", tree, parents)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("package")
    parser.add_argument("out", type=Path)
    parser.add_argument("--releases", type=int, default=60, help="the newest N final releases")
    args = parser.parse_args()
    if args.out.exists():
        parser.error(f"{args.out} exists; give a new folder")
    repo = pygit2.init_repository(str(args.out), bare=True, initial_head="main")
    chosen = releases(args.package)[-args.releases:]
    for n, (version, url, when) in enumerate(chosen, 1):
        commit_release(repo, unpack(url), version, when)
        print(f"{n}/{len(chosen)} {version} {when.date()}", flush=True)


if __name__ == "__main__":
    main()
