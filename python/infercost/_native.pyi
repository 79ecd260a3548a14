# Type stubs of infercost._native (src/python/module.cc). The package's
# functions (infercost/__init__.py) are the documented API; these are the
# native ones they call. tests/python/test_package.py checks that the stub
# and the module define the same names.
from typing import Any, Dict, List, Optional, Tuple

__version__: str

def run(inputs: List[str], model_dir: str, output: str, flags: Dict[str, Any]) -> str: ...
def model_info(model_dir: str) -> Dict[str, Any]: ...
def tokenize(
    texts: Any,
    model: Optional[str] = None,
    tokenizer: Optional[str] = None,
    max_length: int = 512,
    add_special_tokens: bool = True,
) -> List[Optional[List[int]]]: ...
def _read_texts(texts: Any) -> Tuple[List[Optional[str]], List[int], int]: ...
