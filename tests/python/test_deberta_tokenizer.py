"""DeBERTa-v3's tokenizer in both kinds of model directory (issue 28).

Published checkpoints ship spm.model; directories saved by transformers 5 carry the tokenizer.json it
converts that model to. transformers (build/pyenv: no torch; sentencepiece and protobuf to convert)
writes the second kind here from the real spm.model (../shared/data/deberta-v3), and infercost must
give the ids of tools/gen_deberta_golden.py (AutoTokenizer; 2.8 MB of ids that belong in no commit,
made once per build by ctest golden_deberta, or run here into a temporary folder) from both kinds, through infercost.tokenize with a model directory
(the class's pipeline, as AutoTokenizer builds it) and with the bare tokenizer.json.
"""

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import infercost
from conftest import CLI, HERE

SPM = HERE.parent.parent.parent / "shared" / "data" / "deberta-v3" / "spm.model"
GENERATOR = HERE.parent.parent / "tools" / "gen_deberta_golden.py"
MAX_LENGTH = 512


@pytest.fixture(scope="module")
def golden_rows(tmp_path_factory):
    if not SPM.exists():
        pytest.skip(f"shared DeBERTa spm.model {SPM} is absent; skipped")
    # Made once per build (ctest golden_deberta), in the build's INFERCOST_GOLDENS_DIR (ctest sets it).
    made = pathlib.Path(os.environ.get("INFERCOST_GOLDENS_DIR", CLI.parent / "goldens")) / "deberta_golden.jsonl"
    if made.exists():
        with open(made, encoding="utf-8") as f:
            return [json.loads(line) for line in f]
    pytest.importorskip("transformers")
    out = tmp_path_factory.mktemp("deberta-golden")
    proc = subprocess.run([sys.executable, str(GENERATOR), "--deberta", str(SPM.parent), "--out-dir", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{GENERATOR.name} failed: {proc.stderr[-2000:]}"
    with open(out / "deberta_golden.jsonl", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    shutil.rmtree(out)
    return rows


def golden_cases(rows, variant="default"):
    return [(r["t"], r["ids"]) for r in rows if r["v"] == variant]


@pytest.fixture(scope="module")
def model_dirs(tmp_path_factory):
    if not SPM.exists():
        pytest.skip(f"shared DeBERTa spm.model {SPM} is absent; skipped")
    transformers = pytest.importorskip("transformers")
    base = tmp_path_factory.mktemp("deberta")
    spm_dir = base / "spm"
    spm_dir.mkdir()
    shutil.copy(SPM, spm_dir / "spm.model")
    (spm_dir / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": False, "vocab_type": "spm"}))
    (spm_dir / "config.json").write_text(json.dumps({
        "model_type": "deberta-v2", "vocab_size": 128100, "hidden_size": 32, "num_hidden_layers": 1,
        "num_attention_heads": 2, "intermediate_size": 64, "relative_attention": True, "position_buckets": 256,
        "pos_att_type": "p2c|c2p", "position_biased_input": False, "max_position_embeddings": 512}))
    saved_dir = base / "saved"
    transformers.AutoTokenizer.from_pretrained(spm_dir).save_pretrained(saved_dir)
    shutil.copy(spm_dir / "config.json", saved_dir / "config.json")
    assert (saved_dir / "tokenizer.json").exists()
    (saved_dir / "spm.model").unlink(missing_ok=True)  # the tokenizer.json kind alone
    return {"spm": spm_dir, "tokenizer.json": saved_dir}


@pytest.mark.parametrize("kind", ["spm", "tokenizer.json"])
def test_model_directory_gives_transformers_ids(model_dirs, golden_rows, kind):
    cases = golden_cases(golden_rows)
    assert len(cases) >= 10_000
    got = infercost.tokenize([t for t, _ in cases], model=model_dirs[kind], max_length=MAX_LENGTH)
    wrong = [(t, g, w) for (t, w), g in zip(cases, got) if list(g) != w]
    assert not wrong, f"{len(wrong)} of {len(cases)} differ; first: {wrong[0][0]!r}: {wrong[0][1]} != {wrong[0][2]}"


def test_bare_tokenizer_json_gives_transformers_ids(model_dirs, golden_rows):
    cases = golden_cases(golden_rows)[:3000]
    got = infercost.tokenize([t for t, _ in cases], tokenizer=model_dirs["tokenizer.json"] / "tokenizer.json",
                             max_length=MAX_LENGTH)
    assert [list(g) for g in got] == [w for _, w in cases]
