"""The shapes of the dicts the package takes and returns, declared once.

They are ``TypedDict`` classes: plain dicts at run time (``info["labels"]``,
``json.dumps(metrics)``), typed keys for a type checker and an editor. The
package exports them (``infercost.ModelInfo``, ``infercost.RunMetrics``, ...);
``_native.pyi`` types the native module with them. tests/python/test_api.py
checks them against what the engine returns.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, TypedDict, Union

# ---------------------------------------------------------------------------
# model_info(), Model.info
# ---------------------------------------------------------------------------


class _TokenizerInfoSometimes(TypedDict, total=False):
    normalizer: Dict[str, Any]  # WordPiece: lowercase, strip_accents, split_cjk


class TokenizerInfo(_TokenizerInfoSometimes):
    """``model_info(...)["tokenizer"]``: the tokenizer a run of the model uses, as
    ``AutoTokenizer.from_pretrained`` would build it, and its length limit."""

    kind: str  # "wordpiece", "bpe", "unigram"
    source: str  # the file it was read from
    vocab_size: int
    max_length: int


class EmbeddingInfo(TypedDict):
    """``model_info(...)["embedding"]`` of a sentence-transformers directory (one
    with a modules.json): how its encoder's token vectors become one vector per text."""

    source: str  # "sentence-transformers"
    pooling: str  # "cls", "mean", "max" or "lasttoken"
    normalize: bool  # unit length after pooling (a Normalize module)
    dimensions: int
    max_seq_length: Optional[int]  # sentence_bert_config.json's truncation
    max_length: int  # what embed truncates at: max_seq_length as sentence-transformers takes it, within positions
    prompts: Dict[str, str]  # config_sentence_transformers.json's, by name
    default_prompt_name: Optional[str]
    include_prompt: bool  # whether pooling sees a prompt's tokens


class DefaultPrecision(TypedDict):
    """``default_precision`` of ModelInfo: what a run computes in without a precision."""

    cpu: str  # "bf16" where this machine's CPU has native bf16, else "fp32"
    cuda: str  # "bf16 (fp16 before compute capability 8.0)"


class ModelInfo(TypedDict):
    """What :func:`infercost.model_info` returns: the fields ``infercost model info``
    prints, from the model directory's config, weights header and tokenizer."""

    dir: str
    name: str
    architecture: str  # the Hugging Face class, e.g. "DistilBertForSequenceClassification"
    model_type: str
    layers: int
    hidden_size: int
    num_heads: int
    intermediate_size: int
    ffn_activation: str
    vocab_size: int
    max_positions: int
    type_vocab_size: int
    layer_norm_eps: float
    parameters: int
    weights_dtype: str
    default_precision: DefaultPrecision  # what run() computes in without a precision
    classification_head: bool  # False: an encoder without one (the head's keys empty or None)
    no_head: Optional[str]  # why it cannot classify, without a head
    labels: List[str]  # by id
    problem_type: str
    head_function: Optional[str]  # what run() applies by default: "softmax", "sigmoid" or "none"
    head_function_reason: Optional[str]
    labels_column: bool  # the multi-label `labels` output column
    output_columns: List[str]  # the columns after the text: labels lowercased, label[, labels]
    tokenizer: TokenizerInfo
    embedding: Optional[EmbeddingInfo]  # None without a sentence-transformers modules.json
    embedding_refused: Optional[str]  # a modules.json asking for what infercost does not do: why
    synthetic: bool  # random weights (`infercost model synth`)
    synthetic_preset: Optional[str]  # None for a real model
    synthetic_seed: Optional[int]  # None for a real model


class EmbeddingRun(TypedDict):
    """``embedding_run`` of a Model opened to embed: how it makes its vectors."""

    pooling: str
    normalize: bool
    prefix: str
    dimensions: int
    source: str  # where the pooling came from: "sentence-transformers modules.json" or "pooling"


class _RuntimeSometimes(TypedDict, total=False):
    embedding_run: EmbeddingRun  # a Model opened to embed


class _RuntimeOnly(_RuntimeSometimes):
    """How a Model runs, beyond what ModelInfo says."""

    task: str  # "classify" or "embed"
    device: str  # as given: "cpu", "cuda", "cuda:1"
    devices: List[str]  # resolved: "cpu" or "cuda:0", "cuda:1", ...
    precision: str
    threads: int
    tokenizer_threads: int
    max_length: int
    batching: str
    batch_size: int
    max_batch_tokens: int
    workers: int  # inference workers: streams over all devices
    threshold: float


class ModelRuntime(_RuntimeOnly):
    """How a loaded :class:`infercost.Model` runs (the native ``Model.runtime()``): its
    devices, precision, threads and batch policy as resolved, and its head function."""

    head_function: str
    labels_column: bool


class LoadedModelInfo(ModelInfo, _RuntimeOnly):
    """:attr:`infercost.Model.info`: :class:`ModelInfo` and how the Model runs
    (``head_function`` and ``labels_column`` as it runs them)."""


# ---------------------------------------------------------------------------
# run()'s metrics, Model.last_metrics: RunMetrics::to_json (src/engine/metrics.cc)
# ---------------------------------------------------------------------------


class LengthHistogram(TypedDict):
    edges: List[int]  # bucket i holds lengths in [edges[i], edges[i+1]); the last is open-ended
    counts: List[int]


class MetricsModel(TypedDict):
    name: str
    synthetic: bool


class MetricsEmbedding(TypedDict):
    """``embedding`` of an embedding call's or run's metrics: how the vectors were made."""

    dimensions: int
    pooling: str
    normalized: bool
    prefix: str


class _HeadThreshold(TypedDict, total=False):
    threshold: float  # with a labels column only


class MetricsHead(_HeadThreshold):
    function: str
    labels_column: bool


class DeviceMetrics(TypedDict):
    """One entry of ``per_device``: what one device did."""

    device: str
    streams: int
    batches: int
    rows: int
    infer_seconds: float
    oom_retries: int
    max_computed_tokens: int


class Capacity(TypedDict):
    """``capacity``: what ``batch_size="auto"`` / ``max_batch_tokens="auto"`` were sized from."""

    max_tokens: int
    max_rows: int
    basis: str


class ResumeInfo(TypedDict):
    """``resume``: the checkpoint of a run to an output file or folder."""

    checkpoint: str
    resumed: bool
    resumed_rows: int
    already_complete: bool
    checkpoints: int
    checkpoint_seconds: float


class _RunMetricsSometimes(TypedDict, total=False):
    first_skip_reason: str  # with skipped rows
    capacity: Capacity  # with an "auto" batch size
    gpu_sample_interval_seconds: float  # GPUs sampled
    gpu_samples: int
    gpus: List[Dict[str, Any]]
    gpu_monitor: str  # why the GPUs were not sampled
    resume: ResumeInfo  # an output file or folder
    cost: Dict[str, Any]  # a priced run (instance): the instance, its price and the estimate
    embedding: MetricsEmbedding  # an embedding call or run (task "embed")


class RunMetrics(_RunMetricsSometimes):
    """What :func:`infercost.run` and :attr:`infercost.Model.last_metrics` return:
    the JSON of ``infercost run --metrics`` (docs/cpu.md explains the figures)."""

    rows: int
    rows_null: int
    rows_skipped: int
    input_files: int
    output_files: int
    tokens: int
    padded_tokens: int
    computed_tokens: int
    padding_efficiency: float
    batch_fill: float
    rows_at_max_length: int
    batches: int
    length_histogram: LengthHistogram
    wall_seconds: float
    rows_per_second: float
    tokens_per_second: float
    infer_share: float
    peak_rss_bytes: int
    stages: Dict[str, float]  # busy seconds: load, read, tokenize, batch, infer, write
    model: MetricsModel
    task: str  # "classify" or "embed"
    head: MetricsHead
    device: str
    threads: int
    batching: str
    precision: str
    batch_size: int
    max_batch_tokens: int
    window_rows: int
    tokenizer_threads: int
    max_length: int
    devices: List[str]
    workers: int
    per_device: List[DeviceMetrics]
    oom_retries: int
    batch_size_auto: bool
    max_batch_tokens_auto: bool
    model_flops: float
    model_flops_per_second: float


# ---------------------------------------------------------------------------
# The types of the settings Model() and run() take (their names, defaults and
# help come from the engine's table: _settings.py), for a type checker and an
# editor (**settings: Unpack[RunFlags]). tests/python/test_api.py checks that
# they name exactly the engine's settings, scope by scope.
# ---------------------------------------------------------------------------


class Setting(TypedDict):
    """One of the engine's run settings (``infercost._native.settings()``, from
    src/engine/settings.cc): what run(), Model() and the CLI's flags are made from."""

    name: str
    flag: str  # the CLI's: "--max-length", "--no-text"
    scope: str  # "model": Model(), spark and run() (pricing too); "run": run() only
    task: Optional[str]  # "classify" or "embed": that task's only; None: both
    default: Any  # None where the engine decides (threshold)
    help: str
    changes_output: bool  # part of a checkpoint's job identity


class _SharedFlags(TypedDict, total=False):
    """The settings of Model() and run() both: model, device, batching, the
    classifier head's, and pricing (each call's metrics get the cost of its
    rows on ``instance``)."""

    device: Optional[str]
    precision: Optional[str]
    threads: Optional[int]
    max_length: Optional[int]
    batching: Optional[str]
    batch_size: Union[int, str, None]
    max_batch_tokens: Union[int, str, None]
    streams_per_device: Optional[int]
    tokenizer_threads: Optional[int]
    function: Optional[str]  # classification only
    threshold: Optional[float]  # classification only
    on_error: Optional[str]
    instance: Optional[str]
    price_list: Optional[str]
    price_files: Optional[List[str]]
    spot_discount: Optional[float]
    platform_usd_per_hour: Optional[float]
    machines: Optional[int]
    corpus_rows: Optional[int]


class ModelFlags(_SharedFlags, total=False):
    """The settings :class:`infercost.Model` takes: ``infercost run``'s and
    ``infercost embed``'s model, device, batching and pricing flags, ``_`` for
    ``-``. None keeps the engine's default."""

    pooling: Optional[str]  # embeddings only (Model.embed)
    normalize: Optional[bool]  # embeddings only
    prefix: Optional[str]  # embeddings only


class RunFlags(_SharedFlags, total=False):
    """The settings :func:`infercost.run` takes: Model's but the embedding ones
    (run() classifies), and the file job's (reading, writing, checkpoints).
    None keeps the engine's default."""

    column: Optional[str]
    input_format: Optional[str]
    output_format: Optional[str]
    compression: Optional[str]
    window_rows: Optional[int]
    keep_text: Optional[bool]
    resume: Optional[bool]
    force: Optional[bool]
    checkpoint_seconds: Optional[float]
