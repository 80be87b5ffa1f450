"""The OpenAI-compatible embedder against the fake server's /v1/embeddings (trigram counts
hashed into 64 dimensions, not normalised)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from openai_server import EMBED_DIM, FakeOpenAIServer, fake_embedding

from ragassay.embed import embedder_from_meta, get_embedder, known_embedders
from ragassay.embed.openai_compat import OpenAICompatEmbedder
from ragassay.endpoint import EndpointError

TEXTS = ["Der Versand kostet 4,90 €.", "하자보수 기간은 2년이다.", "Backups are kept 35 days.",
         "Availability 99.95%.", "Eine Rücksendung ist kostenlos."]


def unit(v: list[float]) -> np.ndarray:
    a = np.asarray(v, dtype=np.float64)
    return a / np.linalg.norm(a)


def test_registered_as_openai_and_construction_makes_no_request(
        fake_server: FakeOpenAIServer) -> None:
    assert "openai" in known_embedders()
    emb = get_embedder("openai", base_url=fake_server.base_url, model="fake-embed")
    assert isinstance(emb, OpenAICompatEmbedder)
    assert emb.dimension == 0  # not known before the first reply
    assert fake_server.control.request_count == 0


def test_batches_and_l2_normalises(fake_server: FakeOpenAIServer) -> None:
    emb = OpenAICompatEmbedder(fake_server.base_url, "fake-embed", batch_size=2)
    vectors = emb.embed_documents(TEXTS)
    # ceil(5 / 2) = 3 requests of 2, 2 and 1 texts
    assert [len(r.body["input"]) for r in fake_server.control.requests] == [2, 2, 1]
    assert vectors.dtype == np.float32 and vectors.shape == (5, EMBED_DIM)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(vectors[1], unit(fake_embedding(TEXTS[1])), rtol=1e-6)
    assert emb.dimension == EMBED_DIM  # learned from the first reply


def test_prefixes_go_in_front_of_queries_and_passages(fake_server: FakeOpenAIServer) -> None:
    emb = OpenAICompatEmbedder(fake_server.base_url, "e5", query_prefix="query: ",
                               passage_prefix="passage: ")
    q = emb.embed_queries(["warranty"])
    assert fake_server.control.last_body["input"] == ["query: warranty"]
    p = emb.embed_documents(["warranty"])
    assert fake_server.control.last_body["input"] == ["passage: warranty"]
    np.testing.assert_allclose(q[0], unit(fake_embedding("query: warranty")), rtol=1e-6)
    assert not np.allclose(q, p)


def test_no_prefix_by_default(fake_server: FakeOpenAIServer) -> None:
    emb = OpenAICompatEmbedder(fake_server.base_url, "m")
    emb.embed_queries(["x"])
    assert fake_server.control.last_body == {"model": "m", "input": ["x"]}


def test_params_recreate_it_and_never_hold_the_key(fake_server: FakeOpenAIServer,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EMBED_KEY", "sk-secret-1")
    emb = OpenAICompatEmbedder(fake_server.base_url + "/", "e5", batch_size=8,
                               query_prefix="query: ", api_key_env="EMBED_KEY")
    emb.embed_documents(["a"])
    assert fake_server.control.last_headers["Authorization"] == "Bearer sk-secret-1"
    described = emb.describe()
    assert "sk-secret-1" not in json.dumps(described)
    assert described["params"]["base_url"] == fake_server.base_url
    assert described["params"]["batch_size"] == 8
    assert described["model"] == "e5|query_prefix='query: '|passage_prefix=''"
    again = get_embedder("openai", **described["params"])
    assert (again.model, again.params) == (emb.model, emb.params)


def test_reopening_an_index_needs_the_dimension_in_params(fake_server: FakeOpenAIServer
                                                          ) -> None:
    emb = OpenAICompatEmbedder(fake_server.base_url, "m", dimension=EMBED_DIM)
    emb.embed_documents(["a"])
    reopened = embedder_from_meta(emb.describe())
    assert reopened.dimension == EMBED_DIM


def test_a_reply_of_another_dimension_is_an_error(fake_server: FakeOpenAIServer) -> None:
    emb = OpenAICompatEmbedder(fake_server.base_url, "m", dimension=128)
    with pytest.raises(EndpointError, match="returned 64-dimensional vectors, expected 128"):
        emb.embed_documents(["a"])


def test_empty_input_makes_no_request(fake_server: FakeOpenAIServer) -> None:
    emb = OpenAICompatEmbedder(fake_server.base_url, "m", dimension=EMBED_DIM)
    assert emb.embed_documents([]).shape == (0, EMBED_DIM)
    assert fake_server.control.request_count == 0


def test_bad_parameters_are_refused() -> None:
    with pytest.raises(ValueError, match="batch_size"):
        get_embedder("openai", base_url="http://127.0.0.1:1/v1", model="m", batch_size=0)
    with pytest.raises(ValueError, match="bad parameters"):
        get_embedder("openai", base_url="http://127.0.0.1:1/v1", model="m", api_key="x")


def test_failures_use_the_client_retries(fake_server: FakeOpenAIServer) -> None:
    fake_server.control.fail_next(1, status=503, retry_after="0")
    emb = OpenAICompatEmbedder(fake_server.base_url, "m")
    assert emb.embed_documents(["a"]).shape == (1, EMBED_DIM)
    assert fake_server.control.request_count == 2
