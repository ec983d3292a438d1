"""``project-named-url``: the call fetches a URL that the task's own files gave.

## What it does
Matches a ``network`` effect whose URL, as written, was shown earlier by the task: in its
instruction or in the output of a call that read a file there before the agent (a README's
"Dependencies: fetch with ``curl -L -o third_party/stb/stb_image_write.h https://…``", a
``CMakeLists.txt``, a ``Makefile``). Exceptions use it for dependencies the project pins and
documents, which fetching is the build the task asks for.

## Example
After ``cat README.md`` printed ``https://raw.githubusercontent.com/nothings/stb/5c20…/
stb_image_write.h``: ``curl -sSL -o third_party/stb/stb_image_write.h`` that URL. Not
matched: the same URL when only the agent's own words, a web search or a file it wrote
named it, or any other URL of the same host.
"""

from __future__ import annotations

from typing import ClassVar

from safeagents._actions import Effect
from safeagents._detector import CallContext, Detector

__all__ = ["ProjectNamedUrl"]


class ProjectNamedUrl(Detector):
    name: ClassVar[str] = "project-named-url"
    description: ClassVar[str] = "the call fetches a URL the task's own files or instruction gave"

    def matches(self, effect: Effect, context: CallContext) -> bool:
        url = effect.url
        return (
            effect.kind == "network"
            and url is not None
            and context.session.model.project_names_url(url)
        )
