"""The Word-file bench's verdicts fail when their figures miss, and its document is what it
says (paragraphs, a bold word every fifth)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dragoman.bench import files


def _out(
    file_s: list[float],
    list_s: list[float],
    loop_s: float,
    in_file: set[int] | None = None,
    in_list: set[int] | None = None,
) -> dict[str, Any]:
    return files.summarise(file_s, list_s, loop_s, 0.1, in_file, in_list)


def test_verdicts_met_when_the_file_is_near_its_list_and_far_ahead_of_the_loop() -> None:
    out = _out([12.0, 12.4], [10.0, 10.2], 8.0)  # the loop scaled: 80 s, 6.6x the file
    assert files.verdicts(out) == {"file_vs_list": True, "loop_vs_file": True, "translated": True}


def test_verdict_file_vs_list_fails_past_its_limit() -> None:
    out = _out([14.0, 14.0], [10.0, 10.0], 100.0)
    assert out["file_over_list"] == 1.4
    assert files.verdicts(out)["file_vs_list"] is False


def test_verdict_loop_vs_file_fails_below_its_minimum() -> None:
    out = _out([10.0, 10.0], [10.0, 10.0], 4.0)  # scaled 40 s: 4x the file
    assert files.verdicts(out)["loop_vs_file"] is False


def test_verdict_translated_fails_on_a_paragraph_only_the_file_left_as_it_was() -> None:
    out = _out([10.0], [10.0], 10.0, in_file={3, 7}, in_list={3})
    assert out["lost_in_file"] == 1 and files.verdicts(out)["translated"] is False
    # the model's own miss, in both: not the file's path
    out = _out([10.0], [10.0], 10.0, in_file={3}, in_list={3})
    assert out["lost_in_file"] == 0 and files.verdicts(out)["translated"] is True


def test_unchanged_counts_paragraphs_sent_back_as_they_were_and_missing_ones() -> None:
    assert files.unchanged(["a", "b", "c"], ["A", "b"]) == {1, 2}


def test_the_document_holds_the_paragraphs_with_bold_words(tmp_path: Path) -> None:
    import docx

    texts = files.paragraphs(20, seed=3)
    assert len(texts) == 20 and all(texts)
    path = tmp_path / "d.docx"
    files.write_docx(texts, path)
    assert files.read_docx(path) == texts
    bold = [p.runs[0].bold for p in docx.Document(str(path)).paragraphs]
    assert [i for i, b in enumerate(bold) if b] == [i for i in range(20) if i % 5 == 0]


def test_counters_sum_a_metric_over_its_labels_and_keep_kinds_apart() -> None:
    exposition = "\n".join(
        [
            "# HELP dragoman_translation_tokens_total Tokens",
            'dragoman_translation_tokens_total{direction="input"} 120.0',
            'dragoman_translation_tokens_total{direction="output"} 80.0',
            'dragoman_validation_retries_total{failure="language",outcome="fixed"} 2.0',
            'dragoman_validation_retries_total{failure="runaway",outcome="failed"} 1.0',
            'dragoman_validation_retries_total{reason="markers",outcome="repaired"} 9.0',
            'dragoman_repairs_total{kind="marker"} 4.0',
            'dragoman_repairs_total_created{kind="marker"} 1.7e9',
        ]
    )

    class Fake:
        def get(self, path: str) -> Any:
            assert path == "/metrics"
            return type("R", (), {"text": exposition})()

    got = files.counters(Fake())  # type: ignore[arg-type]
    assert got["output_tokens"] == 80.0 and got["input_tokens"] == 120.0
    assert got["retries"] == 3.0 and got["repairs"] == 4.0 and got["translations"] == 0.0
