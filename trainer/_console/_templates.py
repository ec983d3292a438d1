"""The pages' Jinja2 templates (``templates/``) and the filters they use."""

from __future__ import annotations

import jinja2

from trainer._console._views import RunState, number, percent, seconds

__all__ = ["environment", "render_live"]


def _environment() -> jinja2.Environment:
    loaded = jinja2.Environment(
        loader=jinja2.PackageLoader("trainer._console", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    loaded.filters.update(number=number, percent=percent, duration=seconds)
    return loaded


environment = _environment()


def render_live(state: RunState) -> str:
    """The part of a run's page that follows its log: summary, problems and charts."""
    return environment.get_template("live.html").render(state.live())
