"""LlamaIndex as a system under test: a query engine, its source nodes as the contexts.

    # my_rag.py — then `ragassay run -c config.yaml --system my_rag:ask`
    from ragassay.integrations.llamaindex import from_query_engine
    ask = from_query_engine(index.as_query_engine(similarity_top_k=5))

The answer is the response's text; each of its ``source_nodes`` is a context: the node's
content, its score, and ``doc_id`` / ``page`` from its metadata (``doc_id``, ``file_name``,
``page_label``). Nodes are read duck-typed (``node.get_content()``, ``node.metadata``,
``score``). Needs ``llama-index-core`` (the ``llamaindex`` extra).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import context_of, missing_extra

Reply = dict[str, Any]


def from_query_engine(engine: Any) -> Callable[[Reply], Reply]:
    """A system from a LlamaIndex query engine (see the module docstring)."""
    try:
        import llama_index.core  # noqa: F401
    except ImportError:
        raise missing_extra("llama-index-core", "llamaindex") from None

    def ask(request: Reply) -> Reply:
        response = engine.query(request["question"])
        contexts = []
        for scored in getattr(response, "source_nodes", None) or []:
            node = getattr(scored, "node", scored)
            text = node.get_content() if hasattr(node, "get_content") else None
            if isinstance(text, str):
                contexts.append(context_of(text, getattr(node, "metadata", None),
                                           getattr(scored, "score", None)))
        text = getattr(response, "response", None)
        return {"answer": "" if text is None else str(text), "contexts": contexts}

    return ask
