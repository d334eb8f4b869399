"""Model groups from the serve settings: one per `[[models]]` entry, else one for `--model`."""

from __future__ import annotations

from dragoman.deploy.groups import model_groups
from dragoman.service.settings import ModelSpec, ServeSettings


def test_one_group_per_model_entry_with_its_pairs() -> None:
    settings = ServeSettings(
        models=[
            ModelSpec(name="qwen", model="qwen2.5-coder-0.5b-instruct", languages=["en", "de"]),
            ModelSpec(name="gemma", model="gemma-3-270m", pairs=["en-fr"]),
        ]
    )
    qwen, gemma = model_groups(settings)
    assert (qwen.key, qwen.pairs, qwen.prompt) == ("qwen", (("de", "en"), ("en", "de")), "chat")
    assert (gemma.key, gemma.pairs, gemma.prompt) == ("gemma", (("en", "fr"),), "few-shot")
    assert (qwen.languages, gemma.languages) == (("de", "en"), ("en", "fr"))


def test_a_single_model_serves_every_pair_of_its_languages() -> None:
    (group,) = model_groups(ServeSettings(languages=["en", "fr", "de"]))
    assert group.key == "qwen2.5-coder-0.5b-instruct"
    assert len(group.pairs) == 6


def test_the_echo_engine_serves_under_an_echo_name() -> None:
    (group,) = model_groups(ServeSettings(architecture="echo"))
    assert (group.key, group.model) == (
        "echo:qwen2.5-coder-0.5b-instruct",
        "qwen2.5-coder-0.5b-instruct",
    )
