"""The training add-on: scored safeagents transcripts into GRPO rows for per-harness LoRA.

Importing it pulls in no training framework: the pure data path (rows from recorded turns on
the engine's own token ids, rewards, group-relative advantages, staleness and token-budget
micro-batches), the YAML config, environments, the rollout runner, adapter publishing, the
vLLM launcher and the metrics. The GRPO step itself (``trainer._grpo``, ``trainer._trl``) needs
the ``train`` extra and is imported by ``Training.run``. See ``docs/trainer.md``.
"""

from trainer._advantages import (
    DEFAULT_GROUP_SIZE,
    Group,
    GroupCollector,
    Sample,
    group_advantages,
    group_samples,
)
from trainer._async import build_async_trainer, train_async
from trainer._async_worker import TranscriptRolloutWorker
from trainer._batching import (
    BASE_VERSION,
    DEFAULT_MAX_STALENESS,
    DEFAULT_TOKEN_BUDGET,
    Filtered,
    MicroBatch,
    PackedBatch,
    Packing,
    adapter_name,
    drop_stale,
    pack_micro_batches,
    parse_version,
    row_version,
)
from trainer._config import (
    ConfigError,
    ConfigIssue,
    EnvironmentSettings,
    GRPOSettings,
    LoraSettings,
    OptimizerSettings,
    ProxySettings,
    RewardSettings,
    SamplingSettings,
    TrainerConfig,
    VLLMSettings,
    load_config,
)
from trainer._environment import (
    Endpoint,
    Environment,
    EnvironmentSpecError,
    Task,
    load_environment,
)
from trainer._harness_env import HarnessEnvironment
from trainer._live import LiveView
from trainer._metrics import MetricsLog, StepMetrics, read_metrics
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
    reward_hook,
    task_id_of,
)
from trainer._rollouts import Rollout, TaskOf, read_rollout, rollout_from
from trainer._rows import EXCLUDED_REASONS, Row, RowBuild, build_rows
from trainer._runner import ProxyAdmin, ProxyAdminError, RolloutRunner, StepRollouts
from trainer._task_dirs import TaskDirError, VerifierError
from trainer._tiny import build_tiny_llama
from trainer._toy import ToyEnvironment
from trainer._train import Training, TrainingResult
from trainer._vllm import VLLMAdmin, VLLMError, VLLMServer, vllm_args, vllm_env

__all__ = [
    "BASE_VERSION",
    "DEFAULT_GROUP_SIZE",
    "DEFAULT_MAX_STALENESS",
    "DEFAULT_TOKEN_BUDGET",
    "DEFAULT_TOOL_CALL_BONUS",
    "DEFAULT_TOOL_CALL_HORIZON",
    "EXCLUDED_REASONS",
    "AdapterPublisher",
    "ConfigError",
    "ConfigIssue",
    "DefaultReward",
    "Endpoint",
    "Environment",
    "EnvironmentSettings",
    "EnvironmentSpecError",
    "Filtered",
    "GRPOSettings",
    "Group",
    "GroupCollector",
    "HarnessEnvironment",
    "LiveView",
    "LoraSettings",
    "MetricsLog",
    "MicroBatch",
    "OptimizerSettings",
    "Outcome",
    "OutcomeError",
    "PackedBatch",
    "Packing",
    "ProxyAdmin",
    "ProxyAdminError",
    "ProxySettings",
    "RewardFunction",
    "RewardSettings",
    "Rollout",
    "RolloutRunner",
    "Row",
    "RowBuild",
    "Sample",
    "SamplingSettings",
    "StepMetrics",
    "StepRollouts",
    "Task",
    "TaskDirError",
    "TaskOf",
    "ToyEnvironment",
    "TrainerConfig",
    "Training",
    "TrainingResult",
    "TranscriptRolloutWorker",
    "VLLMAdmin",
    "VLLMError",
    "VLLMServer",
    "VLLMSettings",
    "VerifierError",
    "adapter_name",
    "build_async_trainer",
    "build_rows",
    "build_tiny_llama",
    "default_reward",
    "drop_stale",
    "group_advantages",
    "group_samples",
    "load_config",
    "load_environment",
    "load_reward",
    "pack_micro_batches",
    "parse_outcome",
    "parse_version",
    "plot_curves",
    "read_metrics",
    "read_rollout",
    "reward_hook",
    "rollout_from",
    "row_version",
    "task_id_of",
    "train_async",
    "vllm_args",
    "vllm_env",
]
