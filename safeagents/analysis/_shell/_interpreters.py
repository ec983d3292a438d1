"""Interpreters: shells (``bash -c``, piped scripts), ``python``, ``apply_patch``, ``patch``."""

from __future__ import annotations

from collections.abc import Callable

from safeagents._actions import Effect
from safeagents.analysis._shell._foreign import patch_effects, python_effects
from safeagents.analysis._shell._model import Handler, Invocation, ShellState, Word
from safeagents.analysis._shell._network import pip_effects
from safeagents.analysis._shell._options import parse, spec

_SHELLS = ("sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "fish", "csh", "tcsh")
_SHELL_VALUED = frozenset(("-o", "+o", "-O", "+O", "--rcfile", "--init-file"))
_PYTHON_VALUED_LONG = frozenset(("--check-hash-based-pycs",))
_SCRIPT_RUNNERS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "node": (frozenset(("-e", "--eval", "-p", "--print")), frozenset(("-r", "--require"))),
    "nodejs": (frozenset(("-e", "--eval", "-p", "--print")), frozenset(("-r", "--require"))),
    "bun": (frozenset(("-e", "--eval", "-p", "--print")), frozenset()),
    "ruby": (frozenset(("-e",)), frozenset(("-r", "-I", "-C"))),
    "php": (frozenset(("-r",)), frozenset(("-c", "-d", "-z"))),
}


def _feed(invocation: Invocation, analyse: Callable[[str], None]) -> None:
    """Analyse the script piped or heredoc'd in; an unknowable one makes the exec opaque."""
    stdin = invocation.stdin
    if not stdin.fed:
        return
    text = stdin.known_text
    if text is None:
        invocation.opaque = True
    else:
        analyse(text)


def _emit_all(invocation: Invocation, effects: list[Effect] | None) -> None:
    if effects is None:
        invocation.opaque = True
        return
    for effect in effects:
        invocation.emit(effect)


def _bind_positional(state: ShellState, words: list[Word]) -> None:
    for position, word in enumerate(words[:10]):
        if word.exact:
            state.variables[str(position)] = word.text
    rest = words[1:]
    if rest and all(word.exact for word in rest):
        state.variables["@"] = state.variables["*"] = " ".join(word.text for word in rest)


def _shell(invocation: Invocation) -> None:
    """``bash -c S`` analyses S; ``bash`` fed a script analyses it; ``bash f.sh`` is exec only."""
    args = invocation.args
    index = 0
    command_mode = stdin_mode = False
    while index < len(args):
        arg = args[index]
        if arg in ("--", "-"):
            index += 1
            break
        if arg in _SHELL_VALUED:
            index += 2
            continue
        if arg.startswith("--"):
            index += 1
            continue
        if len(arg) > 1 and arg[0] in "-+":
            letters = arg[1:]
            command_mode = command_mode or "c" in letters
            stdin_mode = stdin_mode or "s" in letters
            index += 2 if letters[-1] in "oO" else 1
            continue
        break
    operands = invocation.words[1 + index :]
    if command_mode:
        if not operands:
            return
        script = operands[0]
        if not script.exact or script.process_substitution:
            invocation.opaque = True
            return
        state = invocation.state.fork()
        _bind_positional(state, operands[1:])
        invocation.interpreter.script(script.text, state, invocation.depth)
        return
    if operands and not stdin_mode:
        invocation.opaque = operands[0].process_substitution or not operands[0].exact
        return
    _feed(
        invocation,
        lambda text: invocation.interpreter.script(text, invocation.state.fork(), invocation.depth),
    )


def _su(invocation: Invocation) -> None:
    options = spec(("-c", "--command", "--session-command", "-s", "--shell", "-g", "--group",
                    "-G", "--supp-group", "-w", "--whitelist-environment"))  # fmt: skip
    command = parse(invocation.args, options).value("-c", "--command", "--session-command")
    if command is None:
        return
    if not all(word.exact for word in invocation.words):
        invocation.opaque = True
        return
    invocation.interpreter.script(command, invocation.state.fork(), invocation.depth)


def _python_code(invocation: Invocation, code: Word) -> None:
    if not code.exact:
        invocation.opaque = True
        return
    level = invocation.interpreter.level
    _emit_all(invocation, python_effects(code.text, invocation.ctx, level))


def python(invocation: Invocation) -> None:
    """``python -c CODE`` / ``python - <<EOF``: effects of the code; ``python f.py``: exec."""
    args = invocation.args
    words = invocation.words
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "-" or not arg.startswith("-"):
            break
        if arg == "--":
            index += 1
            break
        if arg.startswith("--"):
            index += 2 if arg in _PYTHON_VALUED_LONG else 1
            continue
        for position in range(1, len(arg)):
            letter = arg[position]
            if letter not in "cmWX":
                continue
            attached = arg[position + 1 :]
            value = (
                Word(attached)
                if attached
                else (words[index + 2] if index + 2 < len(words) else None)
            )
            if letter == "c":
                if value is not None:
                    _python_code(invocation, value)
                return
            if letter == "m":
                rest = args[index + (1 if attached else 2) :]
                if value is not None and value.text == "pip":
                    pip_effects(invocation, rest)
                return
            if not attached:
                index += 1
            break
        index += 1
    if index < len(args) and args[index] != "-":
        script = words[index + 1]
        invocation.opaque = script.process_substitution or not script.exact
        return
    level = invocation.interpreter.level
    _feed(
        invocation,
        lambda text: _emit_all(invocation, python_effects(text, invocation.ctx, level)),
    )


def _script_runner(invocation: Invocation) -> None:
    """``node -e``/``ruby -e`` are exec only; a script piped in from elsewhere is opaque."""
    code_flags, valued = _SCRIPT_RUNNERS[invocation.name]
    parsed = parse(invocation.args, spec(code_flags | valued))
    if parsed.has(*code_flags) or parsed.operands:
        if parsed.operands and not parsed.has(*code_flags):
            script = invocation.words[1 + parsed.indices[0]]
            invocation.opaque = script.process_substitution
        return
    stdin = invocation.stdin
    if stdin.fed and stdin.known_text is None:
        invocation.opaque = True


def _apply_patch(invocation: Invocation) -> None:
    """Codex ``apply_patch`` with the patch as an argument or a heredoc."""
    level = invocation.interpreter.level
    if len(invocation.words) > 1:
        patch = invocation.words[1]
        if not patch.exact:
            invocation.opaque = True
            return
        _emit_all(invocation, patch_effects(patch.text, invocation.ctx, level))
        return
    _feed(
        invocation, lambda text: _emit_all(invocation, patch_effects(text, invocation.ctx, level))
    )


def _patch(invocation: Invocation) -> None:
    options = spec(("-p", "-i", "-d", "-D", "-o", "-r", "-B", "-F", "-V", "-z", "-Y", "-g",
                    "--strip", "--input", "--directory", "--output", "--reject-file", "--prefix",
                    "--suffix", "--fuzz"))  # fmt: skip
    parsed = parse(invocation.args, options)
    directory = parsed.value("-d", "--directory")
    ctx = invocation.ctx.chdir(directory) if directory else invocation.ctx
    patch_files = parsed.values("-i", "--input") + parsed.operands[1:2]
    for patch_file in patch_files:
        invocation.emit_path("read", patch_file)
    if parsed.operands:
        invocation.emit_path("write", parsed.operands[0])
    for output in parsed.values("-o", "--output"):
        invocation.emit_path("write", output)
    if patch_files or parsed.has("--dry-run"):
        return
    level = invocation.interpreter.level
    _feed(invocation, lambda text: _emit_all(invocation, patch_effects(text, ctx, level)))


HANDLERS: dict[str, Handler] = {
    **dict.fromkeys(_SHELLS, _shell),
    "su": _su,
    **dict.fromkeys(_SCRIPT_RUNNERS, _script_runner),
    "apply_patch": _apply_patch,
    "applypatch": _apply_patch,
    "patch": _patch,
}
