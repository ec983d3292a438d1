"""A scripted model server speaking OpenAI Chat, OpenAI Responses and Anthropic Messages.

It replays a :class:`Script` (say / shell / write / tool steps), rendering each step into
the calling harness's own tool schema (or, for a script in text mode and a request without
tools, into fenced ``bash`` blocks), and records every request it receives. Used by the
end-to-end tests and the demo to drive real agent harnesses offline; the launch recipes
(:func:`prepare_launch`, :func:`run_harness`) start those harnesses against any base URL.
"""

from safeagents.scripted._app import RecordedRequest, ScriptedModel, create_app
from safeagents.scripted._dialect import parse_sse
from safeagents.scripted._launch import (
    HARNESSES,
    HarnessLaunch,
    HarnessRun,
    find_harness,
    harness_root,
    prepare_launch,
    run_harness,
)
from safeagents.scripted._render import OfferedTool, RenderedCall, RenderError, Turn
from safeagents.scripted._script import Script, ScriptError, Shell, Step, Tool, Write
from safeagents.scripted._server import ScriptedServer

__all__ = [
    "HARNESSES",
    "HarnessLaunch",
    "HarnessRun",
    "OfferedTool",
    "RecordedRequest",
    "RenderError",
    "RenderedCall",
    "Script",
    "ScriptError",
    "ScriptedModel",
    "ScriptedServer",
    "Shell",
    "Step",
    "Tool",
    "Turn",
    "Write",
    "create_app",
    "find_harness",
    "harness_root",
    "parse_sse",
    "prepare_launch",
    "run_harness",
]
