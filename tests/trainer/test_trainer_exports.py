import trainer


def test_all_lists_exactly_the_public_names() -> None:
    public = {name for name in dir(trainer) if not name.startswith("_")}
    assert sorted(trainer.__all__) == sorted(public)


def test_the_trainer_core_imports_no_training_framework() -> None:
    import sys

    heavy = {"torch", "trl", "peft", "vllm", "transformers"}
    assert not heavy & set(sys.modules)
