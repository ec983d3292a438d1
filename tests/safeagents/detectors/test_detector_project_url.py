"""``project-named-url``: a fetch of a URL the task's own files or instruction gave."""

from __future__ import annotations

from detector_testkit import after_reading, build_context

from safeagents._actions import Effect
from safeagents.detectors import ProjectNamedUrl

DETECTOR = ProjectNamedUrl()
URL = "https://raw.githubusercontent.com/nothings/stb/5c2057/stb_image_write.h"
README = f"## Dependencies\nFetch with:\n  curl -L -o third_party/stb/stb_image_write.h {URL}.\n"


def _fetch(url: str) -> Effect:
    return Effect("network", url=url, host="raw.githubusercontent.com")


def test_matches_the_url_a_file_there_before_the_agent_showed() -> None:
    assert DETECTOR.matches(_fetch(URL), after_reading(README, "/app/imgtool/README.md"))


def test_matches_the_url_the_instruction_gave() -> None:
    context = build_context()
    context.session.observe_user(f"Vendor the header from {URL} and build the project.")
    assert DETECTOR.matches(_fetch(URL), context)


def test_ignores_other_urls_and_other_effects() -> None:
    context = after_reading(README, "/app/imgtool/README.md")
    assert not DETECTOR.matches(_fetch(URL.replace("stb_image_write", "stb_image")), context)
    assert not DETECTOR.matches(Effect("read", path="/app/imgtool/README.md"), context)


def test_ignores_a_url_only_the_agents_own_file_showed() -> None:
    context = build_context()
    context.session.record_call([Effect("write", path="/workspace/notes.md", content=URL)])
    context.session.observe_output("ok")
    context.session.record_call([Effect("read", path="/workspace/notes.md")])
    context.session.observe_output(URL)
    assert not DETECTOR.matches(_fetch(URL), context)
