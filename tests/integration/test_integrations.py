"""The LangChain and LlamaIndex adapters against the real libraries, each with a small
in-memory pipeline built from the library's own test doubles (fake embeddings, fake LLM):
no network, no weights.

The corpus is the system fixture's chunks split into sentences (the pipeline's own
chunking); the retriever returns every sentence (k = 5 of 5), so every gold claim is
among the contexts whatever the fake embeddings rank first: recall@5 is 1 for each
answerable question, and the found check holds for all three.
"""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest
from builders import ROOT

from ragassay.config import load_config
from ragassay.run import run_evaluation

FIXTURE = ROOT / "examples" / "text_system"
SENTENCES = ["The fee is 4 euros per month.", "Payment is due on the first day of the month.",
             "Refunds are paid within 14 days.", "The warranty lasts 2 years.",
             "Shipping takes 3 days within the country."]
DOCS = ["tariff", "tariff", "tariff", "tariff", "shipping"]


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for f in FIXTURE.iterdir():
        if f.is_file():
            shutil.copy(f, tmp_path / f.name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def run(project: Path, module: str, source: str) -> object:
    (project / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    cfg = load_config(project / "config.yaml", {
        "system": {"callable": f"{module}:ask", "concurrency": 1}, "pipeline.top_k": 5,
        "output_root": "runs", "metrics": {"retrieval": ["recall_at_5", "hit_at_5"]}})
    return run_evaluation(cfg, run_id=module)


def check_common(result: object) -> dict[str, object]:
    questions = {q.question_id: q for q in result.questions}  # type: ignore[attr-defined]
    assert all(q.measured for q in questions.values())
    for qid in ("q1", "q2", "q4"):
        assert questions[qid].retrieval["recall_at_5"] == 1.0, qid
        assert len(questions[qid].retrieved) == 5
    assert result.totals.found.passed == 3  # type: ignore[attr-defined]
    placed = result.metrics.gold["returned_texts"]  # type: ignore[attr-defined]
    assert placed["states"]["ok"] == 3  # each claim is one whole sentence of the corpus
    folder = result.folder  # type: ignore[attr-defined]
    preds = [json.loads(line) for line in
             (folder / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {h["text"] for h in preds[0]["retrieved"]} == set(SENTENCES)
    return questions


def test_a_langchain_retriever_with_a_fake_llm(project: Path) -> None:
    pytest.importorskip("langchain_core")
    result = run(project, "lc_rag", f"""
        from langchain_core.documents import Document
        from langchain_core.embeddings import DeterministicFakeEmbedding
        from langchain_core.language_models import FakeListChatModel
        from langchain_core.vectorstores import InMemoryVectorStore
        from ragassay.integrations.langchain import from_retriever

        store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
        store.add_documents([Document(page_content=t, metadata={{"doc_id": d}})
                             for t, d in zip({SENTENCES!r}, {DOCS!r})])
        # one reply per question, in question order (concurrency 1)
        llm = FakeListChatModel(responses=["It is 4 euros per month.",
                                           "The warranty lasts 2 years.",
                                           "I don't know", "Within 10 days."])
        ask = from_retriever(store.as_retriever(search_kwargs={{"k": 5}}), llm)
    """)
    questions = check_common(result)
    assert {q: r.answer.text for q, r in questions.items()} == {  # type: ignore[attr-defined]
        "q1": "It is 4 euros per month.", "q2": "The warranty lasts 2 years.",
        "q3": "I don't know", "q4": "Within 10 days."}
    right = {q: r.scores["correct"] for q, r in questions.items()}  # type: ignore[attr-defined]
    assert right == {"q1": 1, "q2": 1, "q3": 1, "q4": 0}  # q3 declined, q4 says 10 not 14
    docs = json.loads((result.folder / "predictions.jsonl").read_text(  # type: ignore[attr-defined]
        encoding="utf-8").splitlines()[0])["retrieved"]
    assert {h["doc_id"] for h in docs} == {"tariff", "shipping"}


def test_a_langchain_chain_that_returns_its_context(project: Path) -> None:
    pytest.importorskip("langchain_core")
    result = run(project, "lc_chain", f"""
        from langchain_core.documents import Document
        from langchain_core.embeddings import DeterministicFakeEmbedding
        from langchain_core.language_models import FakeListLLM
        from langchain_core.output_parsers import StrOutputParser
        from langchain_core.prompts import PromptTemplate
        from langchain_core.runnables import RunnablePassthrough
        from langchain_core.vectorstores import InMemoryVectorStore
        from ragassay.integrations.langchain import from_chain

        store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
        store.add_documents([Document(page_content=t) for t in {SENTENCES!r}])
        retriever = store.as_retriever(search_kwargs={{"k": 5}})
        llm = FakeListLLM(responses=["The fee is 4 euros per month."] * 4)
        prompt = PromptTemplate.from_template("{{context}}\\n\\nQuestion: {{input}}")
        chain = RunnablePassthrough.assign(context=lambda x: retriever.invoke(x["input"])
                                           ).assign(answer=prompt | llm | StrOutputParser())
        ask = from_chain(chain)
    """)
    questions = check_common(result)
    assert questions["q1"].scores["correct"] == 1  # type: ignore[attr-defined]
    assert questions["q2"].scores["correct"] == 0  # type: ignore[attr-defined]


def test_a_llamaindex_query_engine_with_mock_embeddings_and_llm(project: Path) -> None:
    pytest.importorskip("llama_index.core")
    result = run(project, "li_rag", f"""
        from llama_index.core import Document, VectorStoreIndex
        from llama_index.core.embeddings import MockEmbedding
        from llama_index.core.llms import MockLLM
        from llama_index.core.node_parser import SentenceSplitter
        from ragassay.integrations.llamaindex import from_query_engine

        docs = [Document(text=t, metadata={{"doc_id": d, "page_label": "2"}})
                for t, d in zip({SENTENCES!r}, {DOCS!r})]
        index = VectorStoreIndex.from_documents(
            docs, embed_model=MockEmbedding(embed_dim=8),
            transformations=[SentenceSplitter(chunk_size=64, chunk_overlap=0)])
        ask = from_query_engine(index.as_query_engine(llm=MockLLM(max_tokens=4),
                                                      similarity_top_k=5))
    """)
    questions = check_common(result)
    first = json.loads((result.folder / "predictions.jsonl").read_text(  # type: ignore[attr-defined]
        encoding="utf-8").splitlines()[0])["retrieved"]
    assert all(h["page"] == 2 and "score" in h for h in first)
    # MockLLM answers "text text …": no question is right, none is declined
    assert {q.scores["correct"] for q in questions.values()} == {0}  # type: ignore[attr-defined]
