"""The training add-on: scored safeagents transcripts into GRPO on per-harness LoRA adapters.

The trainer attaches to safeagents as a plugin (entry point ``trainer`` of the ``safeagents``
group): it adds the ``safeagents_reward`` hook (:mod:`trainer.hookspecs`) and the
``safeagents train`` command. Importing it pulls in no training framework: the config,
environments, rewards, adapter publishing, the vLLM launcher and the metrics. A run
(:class:`Training`, :func:`train_async`) needs the ``train`` extra. See ``docs/trainer.md``.
"""

from trainer import hookspecs, sandbox, tasks
from trainer._async import train_async
from trainer._batching import adapter_name
from trainer._config import ConfigError, ConfigIssue, TrainerConfig, load_config
from trainer._environment import Endpoint, Environment, EnvironmentSpecError, Task
from trainer._harness_env import HarnessEnvironment
from trainer._metrics import StepMetrics, read_metrics
from trainer._plot import plot_curves
from trainer._publish import AdapterPublisher
from trainer._reward import (
    DEFAULT_TOOL_CALL_BONUS,
    DEFAULT_TOOL_CALL_HORIZON,
    DefaultReward,
    Outcome,
    OutcomeError,
    RewardFunction,
    default_reward,
    load_reward,
    parse_outcome,
)
from trainer._sandbox_env import SandboxEnvironment
from trainer._sandbox_runner import SandboxRunner
from trainer._scheduler import RolloutFailure
from trainer._toy import ToyEnvironment
from trainer._train import Training, TrainingResult
from trainer._vllm import VLLMError, VLLMServer
from trainer.tasks import TaskDirError, VerifierError

__all__ = [
    "DEFAULT_TOOL_CALL_BONUS",
    "DEFAULT_TOOL_CALL_HORIZON",
    "AdapterPublisher",
    "ConfigError",
    "ConfigIssue",
    "DefaultReward",
    "Endpoint",
    "Environment",
    "EnvironmentSpecError",
    "HarnessEnvironment",
    "Outcome",
    "OutcomeError",
    "RewardFunction",
    "RolloutFailure",
    "SandboxEnvironment",
    "SandboxRunner",
    "StepMetrics",
    "Task",
    "TaskDirError",
    "ToyEnvironment",
    "TrainerConfig",
    "Training",
    "TrainingResult",
    "VLLMError",
    "VLLMServer",
    "VerifierError",
    "adapter_name",
    "default_reward",
    "hookspecs",
    "load_config",
    "load_reward",
    "parse_outcome",
    "plot_curves",
    "read_metrics",
    "sandbox",
    "tasks",
    "train_async",
]
