"""ragassay: measure a RAG system question by question — found, grounded, right — and say why.

The Python API is the evaluation core every command uses::

    import ragassay
    cfg = ragassay.load_config("examples/shop_faq_de/config.yaml")
    questions = ragassay.read_questions(cfg.questions_path)
    result = ragassay.evaluate_rag(questions, ragassay.read_gold(cfg.gold_evidence_path),
                               ragassay.read_predictions(cfg.predictions_path),
                               ragassay.read_chunks(cfg.chunks_path), cfg)
    result.totals.line()           # 'found@3 8/9 · grounded 7/10 · right 6/10'
    result.write("experiments/runs/api")
"""

__version__ = "0.1.0"

# name → module: imported on first use, so `import ragassay.errors` (and every command's
# start-up) does not pay for the whole evaluation core.
_API = {
    "Checks": "checks", "Totals": "checks",
    "EvalConfig": "config", "load_config": "config",
    "InputError": "errors",
    "evaluate_rag": "core",
    "read_gold": "gold", "read_questions": "gold",
    "read_predictions": "predictions",
    "QuestionResult": "runfolder", "RunResult": "runfolder", "read_run_folder": "runfolder",
    "read_chunks": "store",
}


def __getattr__(name: str) -> object:
    if name not in _API:
        raise AttributeError(f"module 'ragassay' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f".{_API[name]}", __name__), name)


__all__ = [
    "Checks",
    "EvalConfig",
    "InputError",
    "QuestionResult",
    "RunResult",
    "Totals",
    "__version__",
    "evaluate_rag",
    "load_config",
    "read_chunks",
    "read_gold",
    "read_predictions",
    "read_questions",
    "read_run_folder",
]
