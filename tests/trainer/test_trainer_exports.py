import ast
from pathlib import Path

import pytest

import trainer

TRAINER = Path(trainer.__file__).parent
HARNESS_PLUGINS = TRAINER.parent / "harness_plugins"


def test_all_lists_exactly_the_public_names() -> None:
    public = {name for name in dir(trainer) if not name.startswith("_")}
    assert sorted(trainer.__all__) == sorted(public)


def test_the_public_surface_is_what_users_need() -> None:
    # Growing it is a decision: the data path (rows, samples, batching) stays private.
    assert set(trainer.__all__) == {
        *("TrainerConfig", "ConfigError", "ConfigIssue", "load_config"),
        *("Training", "TrainingResult", "train_async"),
        *("Environment", "Task", "Endpoint", "EnvironmentSpecError", "RolloutFailure"),
        *("HarnessEnvironment", "SandboxEnvironment", "SandboxRunner", "ToyEnvironment"),
        *("TaskDirError", "VerifierError"),
        *("DefaultReward", "RewardFunction", "default_reward", "load_reward"),
        *("Outcome", "OutcomeError", "parse_outcome"),
        *("DEFAULT_TOOL_CALL_BONUS", "DEFAULT_TOOL_CALL_HORIZON"),
        *("AdapterPublisher", "adapter_name", "VLLMServer", "VLLMError"),
        *("StepMetrics", "read_metrics", "plot_curves"),
        *("hookspecs", "sandbox", "tasks"),
    }


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


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at any level (type-checking and function imports too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _private(module: str) -> bool:
    return any(part.startswith("_") for part in module.split(".")[1:])


def test_the_trainer_and_harness_plugins_use_only_safeagents_public_api() -> None:
    for path in [*TRAINER.glob("*.py"), *HARNESS_PLUGINS.glob("*.py")]:
        private = sorted(
            name for name in _imports(path) if name.split(".")[0] == "safeagents" and _private(name)
        )
        assert private == [], path.name


def test_trainer_modules_import_each_other_without_cycles() -> None:
    modules = {f"trainer.{path.stem}": path for path in TRAINER.glob("*.py")}
    graph = {
        name: {imported for imported in _imports(path) if imported in modules and imported != name}
        for name, path in modules.items()
    }
    graph["trainer.__init__"] = set()  # the package re-exports; modules never import it
    done: set[str] = set()

    def visit(name: str, stack: tuple[str, ...]) -> None:
        assert name not in stack, " -> ".join((*stack, name))
        if name in done:
            return
        for imported in graph.get(name, ()):
            visit(imported, (*stack, name))
        done.add(name)

    for name in graph:
        visit(name, ())


@pytest.mark.parametrize(
    "module", ["_scheduler", "_driver", "_models", "_rollout_cli", "_jsonl", "_tiny_agent"]
)
def test_private_modules_export_what_they_define(module: str) -> None:
    import importlib

    loaded = importlib.import_module(f"trainer.{module}")
    assert loaded.__all__ == sorted(loaded.__all__, key=lambda name: (not name.isupper(), name))
    assert all(hasattr(loaded, name) for name in loaded.__all__)
