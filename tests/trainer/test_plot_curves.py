from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest
from step_metrics_kit import make_step

from trainer._plot import curves_figure, plot_curves

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


needs_matplotlib = pytest.mark.skipif(
    importlib.util.find_spec("matplotlib") is None, reason="matplotlib is in the train extra"
)


@needs_matplotlib
def test_the_png_is_written_and_reads_back(tmp_path: Path) -> None:
    import matplotlib.image

    metrics = [make_step(s, published="toy-v1" if s == 3 else None) for s in range(1, 7)]
    path = plot_curves(metrics, tmp_path / "plots" / "curves.png")
    assert path == tmp_path / "plots" / "curves.png"
    assert path.read_bytes()[:8] == PNG_SIGNATURE
    pixels = matplotlib.image.imread(path)
    assert pixels.shape == (704, 880, 4)  # 8 x 6.4 inches at 110 dpi, RGBA
    assert pixels[..., :3].std() > 0.05  # something is drawn, not a blank canvas


@needs_matplotlib
def test_the_panels_share_the_step_axis_and_carry_the_curves() -> None:
    metrics = [make_step(s, reward_mean=None if s == 2 else 0.1 * s) for s in range(1, 5)]
    reward_axes, calls_axes = curves_figure(metrics).axes
    assert reward_axes.get_shared_x_axes().joined(reward_axes, calls_axes)
    reward, success = reward_axes.get_lines()
    assert list(reward.get_xdata()) == [1, 2, 3, 4]
    rewards = list(reward.get_ydata())
    assert math.isnan(rewards[1]) and rewards[3] == pytest.approx(0.4)
    assert reward.get_label() == "reward mean"
    assert success.get_linestyle() == "--"
    assert list(success.get_ydata()) == [m.success_rate for m in metrics]
    (calls,) = calls_axes.get_lines()
    assert list(calls.get_ydata()) == [m.tool_calls_mean for m in metrics]


@needs_matplotlib
def test_publications_are_dotted_lines_labelled_with_the_adapter() -> None:
    published = {3: "toy-v1", 5: "toy-v2"}
    metrics = [make_step(s, published=published.get(s)) for s in range(1, 7)]
    reward_axes, calls_axes = curves_figure(metrics).axes
    for axes in (reward_axes, calls_axes):
        dotted = [line for line in axes.get_lines() if line.get_linestyle() == ":"]
        assert sorted(line.get_xdata()[0] for line in dotted) == [3, 5]
    labels = {text.get_text(): text.xy[0] for text in reward_axes.texts}
    assert labels == {"toy-v1": 3, "toy-v2": 5}


@needs_matplotlib
def test_each_harness_is_its_own_series_in_step_order() -> None:
    metrics = [make_step(s, harness=h) for s in (2, 1, 3) for h in ("opencode", "pi")]
    reward_axes, _ = curves_figure(metrics).axes
    labels = [line.get_label() for line in reward_axes.get_lines()]
    assert labels == [
        "opencode: reward mean",
        "opencode: success rate",
        "pi: reward mean",
        "pi: success rate",
    ]
    assert list(reward_axes.get_lines()[2].get_xdata()) == [1, 2, 3]
    assert "opencode, pi" in reward_axes.get_title()


def test_no_metrics_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no metrics"):
        plot_curves([], tmp_path / "curves.png")
    assert not (tmp_path / "curves.png").exists()
