"""Built-in detectors: structural checks that rules use as ``detector: NAME``.

They register through the same ``safeagents_detectors`` hook as third-party plugins.
"""

from __future__ import annotations

from safeagents._detector import Detector
from safeagents.detectors._always_equal import AlwaysEqual
from safeagents.detectors._answer_tables import AnswerTable, AnswerTableEarlier, AnswerTableSeen
from safeagents.detectors._caller_source import CallerSource
from safeagents.detectors._collection import UncollectsTests
from safeagents.detectors._commit_reverts import RevertsShownCommit
from safeagents.detectors._cut_text import CutText
from safeagents.detectors._embedded_answers import EmbeddedAnswers
from safeagents.detectors._exit_at_import import ExitAtImport
from safeagents.detectors._expected_output_reads import ExpectedOutputReads
from safeagents.detectors._forged_metrics import ForgedMetric
from safeagents.detectors._forged_results import ForgedResults, PrintedSummary
from safeagents.detectors._frame_introspection import FrameIntrospection
from safeagents.detectors._impossible_pass import ImpossiblePass
from safeagents.detectors._observed_values import ExpectedToObserved
from safeagents.detectors._program_output import ProgramOutputWrite
from safeagents.detectors._project_url import ProjectNamedUrl
from safeagents.detectors._recomputed_expectations import RecomputedExpectations
from safeagents.detectors._release_download import ReleaseDownload
from safeagents.detectors._report_forging import ReportForging
from safeagents.detectors._said_values import AnswerDiffersFromExpected
from safeagents.detectors._skip_flags import SkipFlag
from safeagents.detectors._skip_markers import DeselectsTests, SkipMarkers
from safeagents.detectors._special_casing import SpecialCasing
from safeagents.detectors._stack_sniffing import StackSniffing
from safeagents.detectors._state_toggle import StateToggle
from safeagents.detectors._stdlib_patching import StdlibPatching
from safeagents.detectors._task_code import TaskCode
from safeagents.detectors._test_sniffing import TestSniffing
from safeagents.detectors._test_weakening import TestWeakening
from safeagents.detectors._untracked_leftover import UntrackedLeftover
from safeagents.detectors.env_exfiltration import EnvExfiltration
from safeagents.plugins import hookimpl

__all__ = [
    "AlwaysEqual",
    "AnswerDiffersFromExpected",
    "AnswerTable",
    "AnswerTableEarlier",
    "AnswerTableSeen",
    "CallerSource",
    "CutText",
    "DeselectsTests",
    "EmbeddedAnswers",
    "EnvExfiltration",
    "ExitAtImport",
    "ExpectedOutputReads",
    "ExpectedToObserved",
    "ForgedMetric",
    "ForgedResults",
    "FrameIntrospection",
    "ImpossiblePass",
    "PrintedSummary",
    "ProgramOutputWrite",
    "ProjectNamedUrl",
    "RecomputedExpectations",
    "ReleaseDownload",
    "ReportForging",
    "RevertsShownCommit",
    "SkipFlag",
    "SkipMarkers",
    "SpecialCasing",
    "StackSniffing",
    "StateToggle",
    "StdlibPatching",
    "TaskCode",
    "TestSniffing",
    "TestWeakening",
    "UncollectsTests",
    "UntrackedLeftover",
    "builtin_detectors",
    "safeagents_detectors",
]


def builtin_detectors() -> list[Detector]:
    """A fresh instance of every built-in detector."""
    return [
        AlwaysEqual(),
        ExitAtImport(),
        ReportForging(),
        ForgedResults(),
        ForgedMetric(),
        PrintedSummary(),
        StateToggle(),
        FrameIntrospection(),
        CallerSource(),
        TestSniffing(),
        StackSniffing(),
        StdlibPatching(),
        TestWeakening(),
        RevertsShownCommit(),
        SkipMarkers(),
        DeselectsTests(),
        SkipFlag(),
        UncollectsTests(),
        ExpectedToObserved(),
        RecomputedExpectations(),
        ProgramOutputWrite(),
        SpecialCasing(),
        TaskCode(),
        EnvExfiltration(),
        ReleaseDownload(),
        ProjectNamedUrl(),
        CutText(),
        ImpossiblePass(),
        AnswerTable(),
        EmbeddedAnswers(),
        ExpectedOutputReads(),
        AnswerTableSeen(),
        AnswerTableEarlier(),
        AnswerDiffersFromExpected(),
        UntrackedLeftover(),
    ]


@hookimpl
def safeagents_detectors() -> list[Detector]:
    """The built-in detectors, registered like any plugin's."""
    return builtin_detectors()
