"""LangChain as a system under test: a retriever (with an optional LLM), or a chain.

    # my_rag.py — then `ragassay run -c config.yaml --system my_rag:ask`
    from ragassay.integrations.langchain import from_retriever
    ask = from_retriever(vector_store.as_retriever(search_kwargs={"k": 5}), llm)

- :func:`from_retriever`: the retriever's documents are the contexts (their
  ``page_content``, with ``doc_id``/``source``, ``page`` and ``score`` from their metadata);
  with an ``llm`` (an LLM or a chat model), the answer is its reply to ragassay's own
  answer prompt over those contexts (numbered ``[1]``, ``[2]``: its citations); without
  one, only the retrieval is measured (the answer is ``abstained``).
- :func:`from_chain`: a runnable that takes ``{input_key: question}`` and returns a dict
  holding the answer (``answer_key``) and the context documents (``context_key``), as
  LangChain's retrieval chains do; a plain string output is the answer, with no contexts.

Documents are read duck-typed (``page_content``, ``metadata``): any LangChain version with
those works. Needs ``langchain-core`` (the ``langchain`` extra).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import context_of, missing_extra

Reply = dict[str, Any]


def _require() -> None:
    try:
        import langchain_core  # noqa: F401
    except ImportError:
        raise missing_extra("langchain-core", "langchain") from None


def _contexts(docs: Any) -> list[dict[str, Any]]:
    out = []
    for doc in docs or []:
        text = getattr(doc, "page_content", None)
        if isinstance(text, str):
            meta = getattr(doc, "metadata", None) or {}
            out.append(context_of(text, meta, meta.get("score")))
    return out


def _text(output: Any) -> str:
    content = getattr(output, "content", output)  # a chat model's message, or a string
    if isinstance(content, list):  # content blocks
        content = "".join(b if isinstance(b, str) else str(b.get("text", ""))
                          for b in content if isinstance(b, str | dict))
    return str(content)


def from_retriever(retriever: Any, llm: Any = None, *,
                   decline_phrase: str = "I don't know") -> Callable[[Reply], Reply]:
    """A system from a LangChain retriever and, optionally, an ``llm`` that answers from
    the retrieved documents (see the module docstring)."""
    _require()
    from ..answer.llm import system_message
    from ..answer.prompt import build_prompt
    from ..schema import Chunk

    def ask(request: Reply) -> Reply:
        docs = retriever.invoke(request["question"])
        contexts = _contexts(docs)
        if llm is None:
            return {"answer": {"text": "", "status": "abstained"}, "contexts": contexts}
        chunks = [Chunk(chunk_id=f"#{i}", doc_id=c.get("doc_id", ""), text=c["text"])
                  for i, c in enumerate(contexts, 1)]
        messages = [("system", system_message(decline_phrase)),
                    ("human", build_prompt(request["question"], chunks))]
        return {"answer": _text(llm.invoke(messages)), "contexts": contexts}

    return ask


def from_chain(chain: Any, *, input_key: str = "input", answer_key: str = "answer",
               context_key: str = "context") -> Callable[[Reply], Reply]:
    """A system from a runnable chain returning ``{answer_key: …, context_key: [docs]}``."""
    _require()

    def ask(request: Reply) -> Reply:
        out = chain.invoke({input_key: request["question"]})
        if isinstance(out, dict):
            return {"answer": _text(out.get(answer_key, "")),
                    "contexts": _contexts(out.get(context_key))}
        return {"answer": _text(out), "contexts": []}

    return ask
