"""infercost: batch inference for transformer text classifiers, from Python.

A thin layer over the engine's C++ API (the native module ``infercost._native``):
every function here calls the engine, which is the same code as the
``infercost`` command's.

    import infercost
    metrics = infercost.run(["tweets.jsonl"], "models/sst2", output="pred.parquet", threads=4)
    print(metrics["rows"], metrics["rows_per_second"])
    infercost.model_info("models/sst2")["labels"]          # ['NEGATIVE', 'POSITIVE']
    infercost.tokenize(["Hello world!"], model="models/sst2")

Errors are raised with the engine's message (and the engine's code name in
the exception's ``status_code``): ValueError for bad arguments and bad data,
FileNotFoundError for a missing file, OSError for a failed read or write,
RuntimeError for device, memory and unsupported-model errors, and
KeyboardInterrupt for a run stopped by Ctrl-C.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Sequence, Union

from . import _native

__version__: str = _native.__version__

__all__ = ["run", "model_info", "tokenize", "__version__"]

PathLike = Union[str, "os.PathLike[str]"]


def run(
    inputs: Union[PathLike, Sequence[PathLike]],
    model_dir: PathLike,
    output: PathLike = "-",
    *,
    column: Optional[str] = None,
    input_format: Optional[str] = None,
    output_format: Optional[str] = None,
    compression: Optional[str] = None,
    device: Optional[str] = None,
    streams_per_device: Optional[int] = None,
    batching: Optional[str] = None,
    batch_size: Union[int, str, None] = None,
    max_batch_tokens: Union[int, str, None] = None,
    window_rows: Optional[int] = None,
    precision: Optional[str] = None,
    threads: Optional[int] = None,
    tokenizer_threads: Optional[int] = None,
    max_length: Optional[int] = None,
    function: Optional[str] = None,
    threshold: Optional[float] = None,
    keep_text: Optional[bool] = None,
    on_error: Optional[str] = None,
    resume: Optional[bool] = None,
    force: Optional[bool] = None,
    checkpoint_seconds: Optional[float] = None,
    metrics: Optional[PathLike] = None,
) -> Dict[str, Any]:
    """Classify every row of ``inputs`` into ``output``, as ``infercost run`` does.

    The same job as the command, in this process: the same reader, batching,
    model, output files (byte for byte) and checkpoints. ``inputs`` is a file,
    folder or glob, or a list of them (JSON lines, JSON arrays, CSV, Parquet);
    ``output`` a file (``.jsonl``, ``.csv``, ``.parquet``), a folder (ending in
    ``/`` or existing: one part per input file) or ``"-"`` for JSON lines on
    standard output.

    The keyword arguments are the command's flags with ``_`` for ``-``
    (``infercost run --help`` says what each does); one left at None keeps the
    command's default. Differences: ``keep_text=False`` is ``--no-text``;
    ``batch_size`` and ``max_batch_tokens`` take an int or ``"auto"``;
    ``metrics`` is a path to write the metrics JSON to, as ``--metrics``
    (they are returned anyway). The pricing flags (``--instance`` ...) and the
    progress line are the command's only.

    Returns the run's metrics: the dict ``infercost run --metrics`` writes as
    JSON (rows, tokens, seconds per stage, rows_per_second, ...). On a GPU,
    the command's NVML samples (``gpus``) are not taken: ``gpu_monitor`` says so.

    The GIL is released while the job runs. Ctrl-C (SIGINT) stops it at its
    next durable step, as it stops the command: with an output file or
    folder, a checkpoint is left that ``resume=True`` continues from; then
    KeyboardInterrupt is raised.
    """
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    flags = {
        "column": column,
        "input_format": input_format,
        "output_format": output_format,
        "compression": compression,
        "device": device,
        "streams_per_device": streams_per_device,
        "batching": batching,
        "batch_size": batch_size,
        "max_batch_tokens": max_batch_tokens,
        "window_rows": window_rows,
        "precision": precision,
        "threads": threads,
        "tokenizer_threads": tokenizer_threads,
        "max_length": max_length,
        "function": function,
        "threshold": threshold,
        "keep_text": keep_text,
        "on_error": on_error,
        "resume": resume,
        "force": force,
        "checkpoint_seconds": checkpoint_seconds,
        "metrics": None if metrics is None else os.fspath(metrics),
    }
    text = _native.run([os.fspath(p) for p in inputs], os.fspath(model_dir), os.fspath(output), flags)
    return json.loads(text)


def model_info(model_dir: PathLike) -> Dict[str, Any]:
    """What ``infercost model info`` says of a model directory, as a dict.

    Keys: ``dir``, ``name``, ``architecture`` (the Hugging Face class, e.g.
    ``DistilBertForSequenceClassification``), ``model_type``, ``layers``,
    ``hidden_size``, ``num_heads``, ``intermediate_size``, ``ffn_activation``,
    ``vocab_size``, ``max_positions``, ``type_vocab_size``, ``layer_norm_eps``,
    ``parameters``, ``weights_dtype``, ``labels`` (by id), ``problem_type``,
    ``head_function`` (what ``run`` applies by default: softmax, sigmoid or
    none), ``head_function_reason``, ``labels_column`` (multi-label output),
    ``tokenizer`` (``kind``, ``source``, ``vocab_size``, ``max_length``),
    ``synthetic`` (random weights from ``infercost model synth``: speed real,
    predictions not), ``synthetic_preset`` and ``synthetic_seed`` (None for a
    real model). The weights are read, as the command reads them.
    """
    return _native.model_info(os.fspath(model_dir))


Texts = Any  # list of str/None, numpy array, pandas Series, or an Arrow string array


def tokenize(
    texts: Texts,
    model: Optional[PathLike] = None,
    *,
    tokenizer: Optional[PathLike] = None,
    max_length: int = 512,
    add_special_tokens: bool = True,
) -> List[Optional[List[int]]]:
    """The token ids of each text, as ``infercost tokenize`` gives them.

    Give exactly one of ``model`` (a model directory: its tokenizer, as
    ``AutoTokenizer.from_pretrained`` builds it) or ``tokenizer`` (a
    tokenizer.json, a vocab.txt, or a folder with one). ``texts``: a list of
    str, a numpy array or pandas Series of str, or an Arrow string array or
    chunked array (anything with ``__arrow_c_stream__``/``__arrow_c_array__``),
    read without copying. ``max_length`` truncates (special tokens included;
    0: no limit). A null text gives None.
    """
    return _native.tokenize(
        texts,
        model=None if model is None else os.fspath(model),
        tokenizer=None if tokenizer is None else os.fspath(tokenizer),
        max_length=max_length,
        add_special_tokens=add_special_tokens,
    )
