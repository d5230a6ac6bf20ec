"""``self_evaluation`` is built from typed records and read back by the same schema."""

from __future__ import annotations

from pathlib import Path

from veridiag.config import Settings
from veridiag.contracts.audit import SelfEvaluation
from veridiag.contracts.json import json_object
from veridiag.pipeline.factory import assemble


def test_a_stored_self_evaluation_reads_back_as_the_record_it_was(tmp_path: Path) -> None:
    assembly = assemble(Settings(home=tmp_path / "home"))
    result = assembly.pipeline.run("2026-07-07 10:05 下单接口超时，原因是什么")
    stored = assembly.store.get_session(result.session_id)
    assert stored is not None and stored.self_evaluation is not None
    record = SelfEvaluation.model_validate(stored.self_evaluation)
    assert record.stored() == stored.self_evaluation
    final = record.verifier_evaluation
    assert final.verdict == result.verdict and final.answer_source == result.answer_source
    assert final.composer_input is not None and final.composer_input.scope.startswith(result.answer.splitlines()[0][:8])
    # §23 keeps the final round's structured output and trace once, not in the round as well.
    rounds = stored.self_evaluation["rounds"]
    assert isinstance(rounds, list) and "executor_structured_output" not in json_object(rounds[-1])
    assert final.executor_structured_output is not None and final.tool_trace_summary
