"""infercost: batch inference for transformer text classifiers, from Python.

A thin layer over the engine's C++ API (the native module ``infercost._native``):
every function here calls the engine, which is the same code as the
``infercost`` command's.

    import infercost
    metrics = infercost.run(["tweets.jsonl"], "models/sst2", output="pred.parquet", threads=4)
    print(metrics["rows"], metrics["rows_per_second"])
    infercost.model_info("models/sst2")["labels"]          # ['NEGATIVE', 'POSITIVE']
    infercost.tokenize(["Hello world!"], model="models/sst2")

    with infercost.Model("models/sst2", threads=4) as model:   # loaded once
        result = model.classify(["good movie", "bad movie"])   # list, numpy, pandas, Arrow
        table = pyarrow.table(result)                          # negative, positive, label

    with infercost.Model("models/all-MiniLM-L6-v2") as model:  # a sentence-transformers model
        vectors = model.embed(["good movie", "bad movie"]).vectors  # numpy float32 (2, 384)

A failed engine call raises a subclass of ``infercost.Error`` with the
engine's message (and the engine's code name in the exception's
``status_code``), which also derives from the built-in class for its kind:
InvalidArgumentError and CorruptInputError are ValueErrors, NotFoundError a
FileNotFoundError, InputOutputError an OSError; UnsupportedError,
ResourceExhaustedError, UnavailableError, InternalError and NonFiniteError
are RuntimeErrors. A run or a classify call stopped by Ctrl-C raises
KeyboardInterrupt. The dicts it returns are typed (``ModelInfo``,
``RunMetrics``, ``LoadedModelInfo``: TypedDicts, still plain dicts).
"""

from __future__ import annotations

import json
import os
import warnings
from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Union, cast

from . import _native
from ._native import (
    CorruptInputError,
    Error,
    InputOutputError,
    InternalError,
    InvalidArgumentError,
    NonFiniteError,
    NotFoundError,
    ResourceExhaustedError,
    UnavailableError,
    UnsupportedError,
)
from ._settings import with_settings
from ._types import (
    EmbeddingInfo,
    LoadedModelInfo,
    ModelFlags,
    ModelInfo,
    ModelRuntime,
    RunFlags,
    RunMetrics,
    TokenizerInfo,
)

if TYPE_CHECKING:
    import numpy
    from numpy.typing import NDArray
    from typing_extensions import Unpack

__version__: str = _native.__version__

__all__ = [
    "run",
    "model_info",
    "tokenize",
    "Model",
    "Classification",
    "Embeddings",
    "__version__",
    # Errors (src/python/errors.cc): Error and one subclass per engine code.
    "Error",
    "InvalidArgumentError",
    "CorruptInputError",
    "NotFoundError",
    "InputOutputError",
    "UnsupportedError",
    "ResourceExhaustedError",
    "UnavailableError",
    "InternalError",
    "NonFiniteError",
    # The dicts taken and returned (_types.py).
    "ModelInfo",
    "TokenizerInfo",
    "EmbeddingInfo",
    "LoadedModelInfo",
    "ModelRuntime",
    "RunMetrics",
    "ModelFlags",
    "RunFlags",
]

PathLike = Union[str, "os.PathLike[str]"]


@with_settings("run", RunFlags)
def run(
    inputs: Union[PathLike, Sequence[PathLike]],
    model_dir: PathLike,
    output: PathLike = "-",
    *,
    metrics: Optional[PathLike] = None,
    **settings: Unpack[RunFlags],
) -> RunMetrics:
    """Classify every row of ``inputs`` into ``output``, as ``infercost run`` does.

    The same job as the command, in this process: the same reader, batching,
    model, output files (byte for byte) and checkpoints. ``inputs`` is a file,
    folder or glob, or a list of them (JSON lines, JSON arrays, CSV, Parquet);
    ``output`` a file (``.jsonl``, ``.csv``, ``.parquet``), a folder (ending in
    ``/`` or existing: one part per input file) or ``"-"`` for JSON lines on
    standard output.

    The settings are the command's flags with ``_`` for ``-``, made from the
    same table in the engine, with the same defaults (listed below); None
    keeps the default. ``keep_text=False`` is ``--no-text``; ``batch_size``
    and ``max_batch_tokens`` take an int or ``"auto"``. ``metrics`` is a path
    to write the metrics JSON to, as ``--metrics`` (they are returned
    anyway). The progress line is the command's only.

    Returns the run's metrics: the dict ``infercost run --metrics`` writes as
    JSON (rows, tokens, seconds per stage, rows_per_second, ...; on a GPU the
    NVML samples, ``gpus``, as the command takes them; with ``instance``, the
    run's ``cost``).

    The GIL is released while the job runs. Ctrl-C (SIGINT) stops it at its
    next durable step, as it stops the command: with an output file or
    folder, a checkpoint is left that ``resume=True`` continues from; then
    KeyboardInterrupt is raised.
    """
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    path = None if metrics is None else os.fspath(metrics)
    text = _native.run([os.fspath(p) for p in inputs], os.fspath(model_dir), os.fspath(output), settings, path)
    result = json.loads(text)
    if result["model"]["synthetic"]:  # the note `infercost run` prints, as a warning
        warnings.warn(_native._synthetic_notice(result["model"]["name"]), stacklevel=2)
    return result


def model_info(model_dir: PathLike) -> ModelInfo:
    """What ``infercost model info`` says of a model directory, as a dict.

    Keys: ``dir``, ``name``, ``architecture`` (the Hugging Face class, e.g.
    ``DistilBertForSequenceClassification``), ``model_type``, ``layers``,
    ``hidden_size``, ``num_heads``, ``intermediate_size``, ``ffn_activation``,
    ``vocab_size``, ``max_positions``, ``type_vocab_size``, ``layer_norm_eps``,
    ``parameters``, ``weights_dtype``, ``default_precision`` (``cpu``: what a
    run computes in without a precision on this machine's CPU, bf16 or fp32;
    ``cuda``: on a GPU), ``classification_head`` (False for an
    encoder without one, such as a sentence-transformers directory: ``no_head``
    then says why it cannot classify, and the head's keys are empty or None),
    ``labels`` (by id), ``problem_type``, ``head_function`` (what ``run``
    applies by default: softmax, sigmoid or none), ``head_function_reason``,
    ``labels_column`` (multi-label output), ``output_columns`` (the names of
    the columns ``run`` and ``classify`` write after the text, under the
    default function), ``tokenizer`` (``kind``, ``source``, ``vocab_size``,
    ``max_length``, and ``normalizer`` for WordPiece), ``synthetic`` (random
    weights from ``infercost model synth``: speed real, predictions not),
    ``synthetic_preset`` and ``synthetic_seed`` (None for a real model). The
    same object as ``infercost model info --json``, from the config and the
    weights file's header (no tensor is read).
    """
    return cast(ModelInfo, json.loads(_native.model_info_json(os.fspath(model_dir))))


Texts = Any  # list of str/None, numpy array, pandas Series, or an Arrow string array


def tokenize(
    texts: Texts,
    model: Optional[PathLike] = None,
    *,
    tokenizer: Optional[PathLike] = None,
    max_length: int = 0,
    add_special_tokens: bool = True,
) -> List[Optional[List[int]]]:
    """The token ids of each text, as ``infercost tokenize`` gives them.

    Give exactly one of ``model`` (a model directory: its tokenizer, as
    ``AutoTokenizer.from_pretrained`` builds it) or ``tokenizer`` (a
    tokenizer.json, a DeBERTa-v3 spm.model, a vocab.txt, or a folder with one). ``texts``: a list of
    str, a numpy array or pandas Series of str, or an Arrow string array or
    chunked array (anything with ``__arrow_c_stream__``/``__arrow_c_array__``),
    read without copying. ``max_length`` truncates (special tokens included;
    0: the model's limit with ``model``, none with ``tokenizer``). A null text gives None.
    """
    return _native.tokenize(
        texts,
        model=None if model is None else os.fspath(model),
        tokenizer=None if tokenizer is None else os.fspath(tokenizer),
        max_length=max_length,
        add_special_tokens=add_special_tokens,
    )


class _ArrowResult:
    """A result of the engine held by its native object: its length and its
    Arrow side (the PyCapsule interface), which Classification and Embeddings share."""

    __slots__ = ("_native",)

    def __init__(self, native: Any) -> None:
        self._native = native

    def __len__(self) -> int:
        return len(self._native)

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self._native.__arrow_c_stream__(requested_schema)

    def __arrow_c_array__(self, requested_schema: Any = None) -> Any:
        return self._native.__arrow_c_array__(requested_schema)

    def __arrow_c_schema__(self) -> Any:
        return self._native.__arrow_c_schema__()

    def to_arrow(self):
        """A ``pyarrow.Table`` of the columns (needs pyarrow)."""
        import pyarrow

        return pyarrow.table(self)


class Classification(_ArrowResult):
    """What :meth:`Model.classify` returns: the columns ``infercost run`` writes
    for each input row, in input order, without the text: one float32 column
    per label (named from id2label, lowercased; probabilities, or logits under
    ``function="none"``), ``label`` (the winning label, as in id2label) and,
    for a multi-label model, ``labels`` (the labels at or above the threshold,
    joined by ``","``). A null text gives nulls in every column.

    It is Arrow data (the Arrow PyCapsule interface, ``__arrow_c_stream__``,
    ``__arrow_c_array__``): ``pyarrow.table(result)``, ``polars.from_arrow``,
    ``duckdb`` read it without a copy. ``to_arrow()`` and ``to_pandas()`` need
    pyarrow (and pandas). ``probabilities`` (rows x labels, float32, 0 where
    null), ``label_index`` (int32, -1 where null) and ``is_null`` are numpy
    views of the engine's arrays.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<infercost.Classification: {len(self)} rows, columns {self.column_names}>"

    @property
    def column_names(self) -> List[str]:
        """The output columns, in order."""
        return self._native.column_names

    @property
    def label_names(self) -> List[str]:
        """The label columns (lowercased id2label), in id order."""
        return self._native.label_names

    @property
    def scores(self) -> "NDArray[numpy.float32]":
        """numpy float32 array [rows, labels] of the head function's outputs: probabilities
        under softmax and sigmoid, the logits under ``function="none"`` (zeros for null rows);
        a view."""
        return self._native.scores

    @property
    def probabilities(self) -> "NDArray[numpy.float32]":
        """:attr:`scores` by the name they have under softmax and sigmoid, the default head
        functions (under ``function="none"`` they are logits: read :attr:`scores`)."""
        return self._native.scores

    @property
    def label_index(self) -> "NDArray[numpy.int32]":
        """numpy int32 array: each row's winning label id, -1 for a null row; a view."""
        return self._native.label_index

    @property
    def is_null(self) -> "NDArray[numpy.uint8]":
        """numpy uint8 array: 1 where the row's outputs are null; a view."""
        return self._native.is_null

    def to_pandas(self):
        """A ``pandas.DataFrame`` of the columns (needs pyarrow and pandas)."""
        return self.to_arrow().to_pandas()


class Embeddings(_ArrowResult):
    """What :meth:`Model.embed` returns: one vector per input row, in input
    order, as ``infercost embed`` writes them: the encoder's token vectors
    pooled (and normalized where the model or ``normalize`` says). A null
    text gives a null vector.

    ``vectors`` is a numpy float32 view (rows x dimensions; zeros where
    null), ``is_null`` a numpy uint8 view. It is Arrow data too (the Arrow
    PyCapsule interface): one column ``embedding``,
    ``fixed_size_list<element: float>[dimensions]``, so ``pyarrow.table``,
    ``polars.from_arrow`` and ``duckdb`` read it without a copy.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<infercost.Embeddings: {len(self)} rows of {self.dimensions} dimensions>"

    @property
    def dimensions(self) -> int:
        """The length of each vector (the encoder's hidden size)."""
        return self._native.dimensions

    @property
    def vectors(self) -> "NDArray[numpy.float32]":
        """numpy float32 array [rows, dimensions]: each row's vector (zeros for null rows); a view."""
        return self._native.vectors

    @property
    def is_null(self) -> "NDArray[numpy.uint8]":
        """numpy uint8 array: 1 where the row's vector is null; a view."""
        return self._native.is_null



class Model:
    """A model loaded once on its devices, classifying or embedding texts in memory.

    ``model_dir``: a Hugging Face model directory, as ``infercost run --model``
    and ``infercost embed --model`` take. ``task``: ``"classify"``
    (:meth:`classify`) or ``"embed"`` (:meth:`embed`); None: ``"embed"``
    when an embedding setting (``pooling``, ``normalize``, ``prefix``) is
    given or the directory is a sentence-transformers model without a
    classification head, else ``"classify"`` (:attr:`task` says which).
    The settings are the commands' model, device, batching and pricing
    flags, with ``_`` for ``-``, made from the same table in the engine with
    the same defaults (``help(Model.__init__)`` lists them with their help);
    None keeps the default; those of the other task are refused. With
    ``instance``, each call's metrics (:attr:`last_metrics`) carry its
    ``cost`` on that instance, as ``infercost run --instance`` prices a run.

    Loading reads the weights and prepares every device once; then
    :meth:`classify` (or :meth:`embed`) can be called any number of times. Use it as a context
    manager or call :meth:`close` to free the model's memory. It may be called
    from several Python threads: one call runs at a time per Model (each
    spreads its batches over every core or GPU stream), and the GIL is
    released while it runs.
    """

    @with_settings("model", ModelFlags)
    def __init__(
        self, model_dir: PathLike, *, task: Optional[str] = None, **settings: Unpack[ModelFlags]
    ) -> None:
        """Loads the model at ``model_dir`` on its devices (see :class:`Model`)."""
        self._native = _native.Model(os.fspath(model_dir), settings, task)
        self._info: Optional[ModelInfo] = None

    @property
    def task(self) -> str:
        """``"classify"`` or ``"embed"``: what this Model was opened for."""
        return self._native.task

    def classify(self, texts: Texts) -> Classification:
        """The output columns of every text, in input order (a :class:`Classification`).

        ``texts``: a list of str (None for null), a numpy array or pandas Series
        of str, or any Arrow string array or chunked array (string,
        large_string, string_view; sliced, with nulls), read without copying.
        The rows are tokenized, sorted by length and packed into batches across
        the whole call, and spread over every worker. A text the tokenizer
        refuses is a ValueError naming its row (or, with ``on_error="skip"``,
        null outputs). The GIL is released meanwhile; Ctrl-C (SIGINT) stops
        the call once its batches in flight are done and raises
        KeyboardInterrupt (the Model stays usable).
        """
        return Classification(self._native.classify(texts))

    def embed(self, texts: Texts) -> Embeddings:
        """The vector of every text, in input order (an :class:`Embeddings`), for a
        Model opened to embed (``task="embed"``; a ValueError otherwise).

        ``texts`` as :meth:`classify` takes them; the same batching, threads,
        error handling, GIL release and Ctrl-C. Each text is truncated to
        ``max_length`` tokens (by default sentence-transformers'
        ``max_seq_length`` where the model has one) after the ``prefix``.
        """
        return Embeddings(self._native.embed(texts))

    @property
    def info(self) -> LoadedModelInfo:
        """:func:`model_info` of the directory, with how this Model runs: ``device``,
        ``devices``, ``precision``, ``threads``, ``tokenizer_threads``, ``max_length``,
        ``batching``, ``batch_size``, ``max_batch_tokens``, ``workers``, ``task``,
        ``head_function``, ``labels_column``, ``threshold`` and, opened to embed,
        ``embedding_run`` (pooling, normalize, prefix, dimensions and where the pooling came from)."""
        if self._info is None:
            self._info = model_info(self._native.dir)
        return cast(LoadedModelInfo, {**self._info, **self._native.runtime()})

    @property
    def last_metrics(self) -> Optional[RunMetrics]:
        """The last :meth:`classify` or :meth:`embed` call's metrics, with the keys of ``infercost run
        --metrics`` (rows, tokens, padded and computed tokens, batches,
        ``stages`` (seconds of tokenize / batch / infer), wall_seconds, rows_per_second,
        ...; on a GPU the NVML samples, ``gpus``; with ``instance``, the call's ``cost``);
        None before the first call."""
        text = self._native.last_metrics_json
        return json.loads(text) if text else None

    @property
    def closed(self) -> bool:
        return self._native.closed

    def close(self) -> None:
        """Frees the model on its devices; a later call is a ValueError."""
        self._native.close()

    def __enter__(self) -> "Model":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<infercost.Model {self._native.dir!r} ({state})>"
