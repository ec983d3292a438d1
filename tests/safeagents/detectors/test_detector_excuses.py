"""Changes of an assertion to the value the instruction spells out."""

from safeagents.detectors import _excuses
from safeagents.detectors._assertions import assertion_items
from safeagents.detectors._excuses import spelled_out

ISSUE = (
    "render() loses the tag:\n>>> render(Node('p'))\n'p'\n"
    "instead of the expected `<p class='x'></p>`.\n"
)


def _item(line: str) -> str:
    return assertion_items(line)[0]


def test_exports() -> None:
    assert sorted(_excuses.__all__) == ["MIN_SPELLED_CHARS", "spelled_out"]


def test_no_instruction_excuses_nothing() -> None:
    assert spelled_out("") is None and spelled_out("  \n") is None


def test_a_move_from_the_quoted_bug_to_the_spelled_out_value_is_excused() -> None:
    excused = spelled_out(ISSUE)
    assert excused is not None
    old = _item("assert render(Node('p')) == 'p'")
    assert excused(old, _item("assert render(Node('p')) == \"<p class='x'></p>\""))
    assert not excused(old, _item("assert render(Node('p')) == '<div></div>'"))
    assert not excused(old, _item("assert render(Node('p')) == '<p>'"))  # too short


def test_a_deleted_value_the_instruction_never_shows_is_not_excused() -> None:
    excused = spelled_out(ISSUE)
    assert excused is not None
    old = _item("assert render(Node('p')) == 'NOTHING HERE'")
    assert not excused(old, _item("assert render(Node('p')) == \"<p class='x'></p>\""))


def test_a_value_the_instruction_asserts_itself_is_the_specification() -> None:
    task = (
        "def title(s):\n    '''>>> title('ab cd')\n    'Ab Cd (2 words)'\n    '''\n"
        "def check(candidate):\n    assert candidate('ab cd') == 'Ab Cd'\n"
    )
    excused = spelled_out(task)
    assert excused is not None
    old = _item("assert candidate('ab cd') == 'Ab Cd'")
    assert not excused(old, _item("assert candidate('ab cd') == 'Ab Cd (2 words)'"))
