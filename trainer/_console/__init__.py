"""The trainer's section of the web console: training runs, live, and evaluations."""

from trainer._console._app import training_app

__all__ = ["training_app"]
