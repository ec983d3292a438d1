"""A tiny agent for pi: the tiny Llama fine-tuned on pi's own conversation (captured from a
real pi run against the scripted model: a ``bash ls`` call, its output, an answer), varied
in task, working directory and listing, so that sampled through vLLM it takes two turns."""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness_env_kit import ScriptPerWorkspaceServer, require_harness

from safeagents.scripted import Script, prepare_launch, run_harness
from trainer._tiny import TINY_WORDS
from trainer._tiny_agent import AgentTraining, build_tiny_agent

CALL_LS = Script.from_data([{"shell": "ls"}, "done"])
ANSWER = "done"
_WORDS = [word for word in TINY_WORDS if word.isalpha()]
_CWD = re.compile(r"Current working directory: \S+")


def pi_conversation(work: Path) -> list[dict[str, Any]]:
    """What pi sends after a ``bash ls`` call (system prompt, task, call, output), then the
    answer that ends the session."""
    binary = require_harness("pi")
    workspace = work / "workspace"
    workspace.mkdir(parents=True)
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    with ScriptPerWorkspaceServer([CALL_LS]) as server:
        launch = prepare_launch(
            "pi",
            f"{server.url}/v1",
            "tiny",
            workspace,
            "Count the files.",
            work / "state",
            binary=binary,
        )
        run = run_harness(launch, timeout=120)
        assert run.returncode == 0, run.output[-2000:]
        last = server.router.models[0].requests[-1].body
    messages: list[dict[str, Any]] = [*last["messages"], {"role": "assistant", "content": ANSWER}]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "assistant"]
    return messages


def varied(
    conversation: list[dict[str, Any]], count: int, prompts: Sequence[str], seed: int = 0
) -> list[list[dict[str, Any]]]:
    """``count`` copies with a random working directory and ``ls`` listing, every other one
    asking one of ``prompts`` (the tasks the agent will run) and the rest random words."""
    chosen = random.Random(seed)

    def words(low: int, high: int) -> list[str]:
        return [chosen.choice(_WORDS) for _ in range(chosen.randint(low, high))]

    found = []
    for index in range(count):
        system, user, call, output, answer = copy.deepcopy(conversation)
        system["content"] = _CWD.sub(
            "Current working directory: /" + "/".join(words(1, 5)), system["content"]
        )
        text = " ".join(words(3, 20)) + chosen.choice("?.")
        if index % 2 == 0 and prompts:
            text = prompts[index // 2 % len(prompts)]
        user["content"] = [{"type": "text", "text": text}]
        output["content"] = "".join(
            name + chosen.choice((".py", ".md", "")) + "\n" for name in words(1, 6)
        )
        found.append([system, user, call, output, answer])
    return found


def build_pi_agent(
    work: Path, prompts: Sequence[str], conversations: int = 10
) -> tuple[Path, AgentTraining]:
    """The tiny agent fitted for tasks asking ``prompts``: its directory, how fitting went."""
    examples = varied(pi_conversation(work / "capture"), conversations, prompts)
    model = work / "agent"
    return model, build_tiny_agent(model, examples, target_loss=3e-3)
