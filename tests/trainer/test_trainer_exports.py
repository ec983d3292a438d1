import trainer


def test_all_lists_exactly_the_public_names() -> None:
    public = {name for name in dir(trainer) if not name.startswith("_")}
    assert sorted(trainer.__all__) == sorted(public)


def test_the_trainer_core_imports_no_training_framework() -> None:
    # A fresh interpreter: other tests in this process import torch and transformers.
    import subprocess
    import sys

    heavy = ["torch", "trl", "peft", "vllm", "transformers"]
    check = (
        "import sys, trainer, trainer._vllm, trainer._tiny\n"
        f"print(sorted(set({heavy}) & set(sys.modules)))"
    )
    found = subprocess.run(
        [sys.executable, "-c", check], capture_output=True, text=True, check=True
    )
    assert found.stdout.strip() == "[]"
