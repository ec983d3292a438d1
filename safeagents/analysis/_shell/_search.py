"""Search commands: ``grep``/``rg``, ``find`` (with ``-delete``/``-exec``), ``ls``, ``fd``."""

from __future__ import annotations

import posixpath

from safeagents._actions import Effect
from safeagents.analysis._shell._model import (
    MAX_EXPANSIONS,
    BudgetExhausted,
    Handler,
    Invocation,
    Stream,
    Word,
)
from safeagents.analysis._shell._options import Spec, parse, spec

_GREP = spec(("-e", "-f", "-m", "-A", "-B", "-C", "-d", "-D", "--regexp", "--file",
              "--max-count", "--after-context", "--before-context", "--context", "--include",
              "--exclude", "--exclude-dir", "--exclude-from", "--label", "--directories",
              "--devices", "--binary-files", "--group-separator"))  # fmt: skip
_RG = spec(("-e", "-f", "-g", "--glob", "--iglob", "-t", "--type", "-T", "--type-not", "-m",
            "--max-count", "-A", "-B", "-C", "--after-context", "--before-context", "--context",
            "-j", "--threads", "-M", "--max-columns", "--max-depth", "-d", "-E", "--encoding",
            "--type-add", "--sort", "--sortr", "--max-filesize", "-r", "--replace", "--pre",
            "--pre-glob", "--ignore-file", "--colors", "--context-separator", "--path-separator",
            "--engine", "--regexp", "--file"))  # fmt: skip
_AG = spec(("-G", "--file-search-regex", "--ignore", "--ignore-dir", "-m", "--max-count", "-A",
            "-B", "-C", "--after", "--before", "--context", "--depth", "-g", "-p",
            "--path-to-ignore", "--pager", "-W", "--width", "--type", "--output"))  # fmt: skip
_GREP_SPECS: dict[str, Spec] = {
    "grep": _GREP, "egrep": _GREP, "fgrep": _GREP, "zgrep": _GREP,
    "rg": _RG, "ag": _AG, "ack": _AG, "ack-grep": _AG,
}  # fmt: skip
_ALWAYS_RECURSIVE = frozenset(("rg", "ag", "ack", "ack-grep", "git"))
_FIND_VALUED = frozenset(
    ("-type", "-xtype", "-maxdepth", "-mindepth", "-mtime", "-mmin", "-atime", "-amin", "-ctime",
     "-cmin", "-size", "-perm", "-user", "-group", "-uid", "-gid", "-newer", "-anewer", "-cnewer",
     "-samefile", "-inum", "-links", "-lname", "-ilname", "-printf", "-fstype", "-context",
     "-used", "-regextype", "-regex", "-iregex")
)  # fmt: skip
_FIND_NAMES = frozenset(("-name", "-iname"))
_FIND_PATHS = frozenset(("-path", "-ipath", "-wholename", "-iwholename"))
_FIND_EXECS = frozenset(("-exec", "-execdir", "-ok", "-okdir"))
_FIND_OUTPUTS = frozenset(("-fprint", "-fprint0", "-fls", "-fprintf"))


def grep_effects(invocation: Invocation, args: list[str], options: Spec, recursive: bool) -> Stream:
    """Reads and a ``search`` per searched path; lists files for ``xargs`` under ``-l``."""
    parsed = parse(args, options)
    patterns = parsed.values("-e", "--regexp")
    for pattern_file in parsed.values("-f", "--file"):
        invocation.emit_path("read", pattern_file)
    operands = [operand for operand in parsed.operands]
    listing_only = parsed.has("--files")
    if not patterns and not parsed.values("-f", "--file") and operands and not listing_only:
        patterns = [operands.pop(0)]
    if invocation.name in ("ag", "ack") and parsed.value("-g") is not None:
        patterns = [parsed.value("-g") or ""]
    recursive = recursive or parsed.has("-r", "-R", "--recursive", "--dereference-recursive")
    files = [operand for operand in operands if operand != "-"]
    for file in files:
        invocation.emit_path("read", file)
    searched = files or (["."] if recursive else [])
    pattern = patterns[0] if patterns else None
    for path in searched:
        invocation.emit(Effect("search", pattern=pattern, path=invocation.path(path)))
    if listing_only or parsed.has("-l", "--files-with-matches", "-L", "--files-without-match"):
        suffix = "/**" if recursive else ""
        return Stream(None, tuple(invocation.path(path) + suffix for path in searched), "pipe")
    return Stream(None, None, "pipe")


def _grep(invocation: Invocation) -> Stream:
    name = invocation.name
    return grep_effects(invocation, invocation.args, _GREP_SPECS[name], name in _ALWAYS_RECURSIVE)


def _find(invocation: Invocation) -> Stream:
    """``find ROOT… EXPR``: a search per root; ``-delete``/``-exec`` act on ``ROOT/**/NAME``."""
    args = invocation.args
    index = 0
    while index < len(args) and (args[index] in ("-H", "-L", "-P") or args[index][:2] == "-O"):
        index += 1
    roots: list[str] = []
    while index < len(args) and not args[index].startswith(("-", "(", "!", ")", ",")):
        roots.append(args[index])
        index += 1
    names: list[str] = []
    path_patterns: list[str] = []
    regexes: list[str] = []
    execs: list[list[Word]] = []
    negated = deleting = False
    pending_not = False
    while index < len(args):
        arg = args[index]
        value = args[index + 1] if index + 1 < len(args) else ""
        if arg in ("!", "-not"):
            pending_not = True
            index += 1
            continue
        if arg in _FIND_NAMES or arg in _FIND_PATHS:
            negated = negated or pending_not
            if not pending_not:
                (names if arg in _FIND_NAMES else path_patterns).append(value)
            index += 2
        elif arg in _FIND_EXECS:
            end = index + 1
            while end < len(args) and args[end] not in (";", "+"):
                end += 1
            execs.append(invocation.words[index + 2 : end + 1])
            index = end + 1
        elif arg in _FIND_OUTPUTS:
            invocation.emit_path("write", value)
            index += 3 if arg == "-fprintf" else 2
        else:
            if arg in ("-regex", "-iregex"):
                regexes.append(value)
            deleting = deleting or arg == "-delete"
            index += 2 if arg in _FIND_VALUED else 1
        pending_not = False
    roots = roots or ["."]
    patterns = names or path_patterns or regexes
    pattern = patterns[0] if patterns else None
    for root in roots:
        invocation.emit(Effect("search", pattern=pattern, path=invocation.path(root)))
    targets = _find_targets(invocation, roots, [] if negated else names, path_patterns)
    if deleting:
        for target in targets:
            invocation.emit(Effect("delete", path=target))
    for command in execs:
        run_on_targets(invocation, command, targets)
    return Stream(None, tuple(targets), "pipe")


def _find_targets(
    invocation: Invocation, roots: list[str], names: list[str], path_patterns: list[str]
) -> list[str]:
    targets: list[str] = []
    for root in roots:
        if names:
            targets.extend(invocation.path(posixpath.join(root, "**", name)) for name in names)
        elif path_patterns:
            for pattern in path_patterns:
                spelled = pattern if not pattern.startswith("*") else posixpath.join(root, pattern)
                targets.append(invocation.path(spelled))
        else:
            targets.append(invocation.path(root))
    unique = list(dict.fromkeys(targets))
    if len(unique) > MAX_EXPANSIONS:
        raise BudgetExhausted
    return unique


def run_on_targets(invocation: Invocation, command: list[Word], targets: list[str]) -> None:
    """Analyse ``-exec CMD {}``-style commands once per target, ``{}`` replaced by it."""
    if not command:
        return
    text = " ".join(word.text for word in command)
    placeholder = any("{}" in word.text for word in command)
    for target in targets:
        if placeholder:
            words = [Word(word.text.replace("{}", target), word.exact) for word in command]
        else:
            words = [*command, Word(target)]
        invocation.interpreter.words(words, invocation.state, invocation.depth, text)


def _ls(invocation: Invocation) -> Stream:
    options = spec(("-I", "--ignore", "-w", "--width", "-T", "--tabsize", "--sort", "--time",
                    "--format", "--hide", "--block-size", "--quoting-style",
                    "--indicator-style", "--time-style"))  # fmt: skip
    operands = parse(invocation.args, options).operands
    for operand in operands or ["."]:
        invocation.emit(Effect("search", path=invocation.path(operand)))
    return Stream(None, tuple(operands) if operands else ("*",), "pipe")


def _tree(invocation: Invocation) -> None:
    options = spec(("-L", "-P", "-I", "-o", "--filelimit", "--charset", "-H", "--sort"))
    parsed = parse(invocation.args, options)
    pattern = parsed.value("-P")
    for operand in parsed.operands or ["."]:
        invocation.emit(Effect("search", pattern=pattern, path=invocation.path(operand)))


def _fd(invocation: Invocation) -> Stream:
    args = invocation.args
    command: list[Word] = []
    for index, arg in enumerate(args):
        if arg in ("-x", "--exec", "-X", "--exec-batch"):
            command = [word for word in invocation.words[index + 2 :] if word.text != ";"]
            args = args[:index]
            break
    options = spec(("-e", "--extension", "-t", "--type", "-d", "--max-depth", "--min-depth",
                    "-E", "--exclude", "-S", "--size", "--changed-within", "--changed-before",
                    "-o", "--owner", "--base-directory", "--search-path", "--path-separator",
                    "-j", "--threads", "--max-results"))  # fmt: skip
    parsed = parse(args, options)
    pattern = parsed.operands[0] if parsed.operands else None
    roots = parsed.operands[1:] or parsed.values("--search-path") or ["."]
    for root in roots:
        invocation.emit(Effect("search", pattern=pattern, path=invocation.path(root)))
    targets = [invocation.path(root) + ("/**" if pattern else "") for root in roots]
    run_on_targets(invocation, command, targets)
    return Stream(None, tuple(targets), "pipe")


HANDLERS: dict[str, Handler] = {
    **dict.fromkeys(_GREP_SPECS, _grep),
    "find": _find,
    "ls": _ls,
    "tree": _tree,
    "fd": _fd,
    "fdfind": _fd,
}
