"""File commands: readers, writers, copies, moves, deletes and in-place editors."""

from __future__ import annotations

import posixpath

from safeagents._actions import Effect
from safeagents.analysis._shell._model import Handler, Invocation, Stream
from safeagents.analysis._shell._options import Parsed, Spec, parse, spec

_READERS: dict[str, Spec] = {
    "cat": spec(),
    "zcat": spec(),
    "head": spec(("-n", "-c", "--lines", "--bytes")),
    "tail": spec(("-n", "-c", "-s", "--lines", "--bytes", "--pid", "--sleep-interval")),
    "less": spec(("-p", "-x", "-y", "-b", "-h", "-j", "-k", "-o", "-O", "-P", "-t", "-T", "-z")),
    "more": spec(("-n", "-p")),
    "bat": spec(("-l", "--language", "-H", "--highlight-line", "--file-name", "--style",
                 "--theme", "-r", "--line-range", "-m", "--map-syntax", "--tabs", "--wrap",
                 "--terminal-width", "--color", "--decorations", "--paging", "--pager")),
    "nl": spec(("-b", "-d", "-f", "-h", "-i", "-l", "-n", "-s", "-v", "-w")),
    "wc": spec(),
    "od": spec(("-A", "-j", "-N", "-S", "-t", "-w")),
    "xxd": spec(("-c", "-g", "-l", "-o", "-s", "-n")),
    "hexdump": spec(("-e", "-f", "-n", "-s")),
    "strings": spec(("-n", "-t", "-e", "-T", "--bytes", "--radix", "--encoding", "--target")),
    "tac": spec(("-s", "--separator")),
    "sort": spec(("-k", "-t", "-o", "-S", "-T", "--key", "--field-separator", "--output",
                  "--buffer-size", "--temporary-directory", "--parallel", "--batch-size")),
    "uniq": spec(("-f", "-s", "-w")),
    "cut": spec(("-b", "-c", "-d", "-f", "--output-delimiter")),
    "md5sum": spec(),
    "sha1sum": spec(),
    "sha256sum": spec(),
    "sha512sum": spec(),
    "cksum": spec(),
    "base64": spec(("-w", "--wrap")),
    "fold": spec(("-w", "--width")),
    "paste": spec(("-d", "--delimiters")),
    "diff": spec(("-C", "-U", "-x", "-X", "-I", "-F", "-L", "-D", "-W", "--label", "--exclude",
                  "--exclude-from", "--ignore-matching-lines", "--show-function-line",
                  "--width", "--tabsize", "--line-format", "--from-file", "--to-file")),
    "cmp": spec(("-i", "-n", "--ignore-initial", "--bytes")),
    "comm": spec(("--output-delimiter",)),
    "sdiff": spec(("-o", "-w", "-I", "--output", "--width")),
}  # fmt: skip
_READERS["batcat"] = _READERS["bat"]
_READERS["colordiff"] = _READERS["diff"]

_DELETERS: dict[str, Spec] = {
    "rm": spec(),
    "rmdir": spec(),
    "unlink": spec(),
    "shred": spec(("-n", "-s", "--iterations", "--size", "--random-source")),
}
_COPY_SPEC = spec(("-t", "-S", "--target-directory", "--suffix", "-m", "--mode", "-o",
                   "--owner", "-g", "--group"))  # fmt: skip


def _read(invocation: Invocation) -> Stream | None:
    parsed = parse(invocation.args, _READERS[invocation.name])
    operands = [op for op in parsed.operands if op != "-"]
    for operand in operands:
        invocation.emit_path("read", operand)
    name = invocation.name
    if name == "sort":
        for output in parsed.values("-o", "--output"):
            invocation.emit_path("write", output)
    if name == "uniq" and len(parsed.operands) > 1:
        invocation.emit_path("write", parsed.operands[1])
    if name == "cat" and not operands:
        stdin = invocation.stdin
        return Stream(stdin.text, stdin.paths, "pipe", stdin.exact)
    return None


def _delete(invocation: Invocation) -> None:
    for operand in parse(invocation.args, _DELETERS[invocation.name]).operands:
        invocation.emit_path("delete", operand)


def _touch(invocation: Invocation) -> None:
    parsed = parse(invocation.args, spec(("-d", "-t", "-r", "--date", "--reference")))
    for operand in parsed.operands:
        invocation.emit_path("write", operand)


def _truncate(invocation: Invocation) -> None:
    parsed = parse(invocation.args, spec(("-s", "-r", "--size", "--reference")))
    emptied = parsed.value("-s", "--size") in ("0", "=0")
    for operand in parsed.operands:
        invocation.emit_path("write", operand, content="" if emptied else None)


def _tee(invocation: Invocation) -> Stream:
    parsed = parse(invocation.args, spec(("--output-error",)))
    append = parsed.has("-a", "--append")
    text = invocation.stdin.known_text
    for operand in parsed.operands:
        if append:
            invocation.emit_path("write", operand, added=text)
        else:
            invocation.emit_path("write", operand, content=text, added=text)
    stdin = invocation.stdin
    return Stream(stdin.text, stdin.paths, "pipe", stdin.exact)


def _transfers(invocation: Invocation, parsed: Parsed) -> list[tuple[str, str]]:
    """(source, destination) pairs of ``cp``/``mv``/``install``/``ln`` operands."""
    operands = list(parsed.operands)
    target_dir = parsed.value("-t", "--target-directory")
    if target_dir is not None:
        return [(source, _into(target_dir, source)) for source in operands]
    if len(operands) < 2:
        return []
    *sources, destination = operands
    directory = len(sources) > 1 or destination.endswith("/") or destination in (".", "..")
    if directory:
        return [(source, _into(destination, source)) for source in sources]
    return [(sources[0], destination)]


def _into(directory: str, source: str) -> str:
    return posixpath.join(directory, posixpath.basename(source.rstrip("/")) or source)


def _copy(invocation: Invocation) -> None:
    parsed = parse(invocation.args, _COPY_SPEC)
    if invocation.name == "install" and parsed.has("-d", "--directory"):
        return
    for source, destination in _transfers(invocation, parsed):
        invocation.emit_path("read", source)
        invocation.emit_path("write", destination)


def _move(invocation: Invocation) -> None:
    parsed = parse(invocation.args, _COPY_SPEC)
    for source, destination in _transfers(invocation, parsed):
        invocation.emit(
            Effect("move", path=invocation.path(source), dest=invocation.path(destination))
        )


def _link(invocation: Invocation) -> None:
    parsed = parse(invocation.args, _COPY_SPEC)
    pairs = _transfers(invocation, parsed)
    if not pairs and len(parsed.operands) == 1:
        pairs = [(parsed.operands[0], _into(".", parsed.operands[0]))]
    for _target, link in pairs:
        invocation.emit_path("write", link)


def _dd(invocation: Invocation) -> None:
    for arg in invocation.args:
        key, equals, value = arg.partition("=")
        if equals and key == "if":
            invocation.emit_path("read", value)
        elif equals and key == "of":
            invocation.emit_path("write", value)


def _sed(invocation: Invocation) -> None:
    """``sed``: reads its files, or writes them with ``-i``; the script goes in ``command``."""
    args = invocation.args
    in_place = False
    scripts: list[str] = []
    operands: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            operands.extend(args[index + 1 :])
            break
        if arg.startswith("--"):
            name, equals, value = arg.partition("=")
            in_place = in_place or name == "--in-place"
            if name in ("--expression", "--file", "--line-length") and not equals:
                index += 1
                value = args[index] if index < len(args) else ""
            if name == "--expression":
                scripts.append(value)
            elif name == "--file":
                invocation.emit_path("read", value)
                scripts.append("")
        elif arg.startswith("-") and len(arg) > 1:
            index, in_place = _sed_cluster(invocation, args, index, scripts, in_place)
        else:
            operands.append(arg)
        index += 1
    if not scripts and operands:
        scripts.append(operands.pop(0))
    expression = "; ".join(script for script in scripts if script) or None
    for operand in operands:
        if operand == "-":
            continue
        if in_place:
            invocation.emit_path("write", operand, command=expression)
        else:
            invocation.emit_path("read", operand)


def _sed_cluster(
    invocation: Invocation, args: list[str], index: int, scripts: list[str], in_place: bool
) -> tuple[int, bool]:
    arg = args[index]
    for position in range(1, len(arg)):
        letter = arg[position]
        if letter == "i":
            if position == len(arg) - 1 and index + 1 < len(args) and args[index + 1] == "":
                index += 1
            return index, True
        if letter in "efl":
            value = arg[position + 1 :]
            if not value and index + 1 < len(args):
                index += 1
                value = args[index]
            if letter == "e":
                scripts.append(value)
            elif letter == "f":
                invocation.emit_path("read", value)
                scripts.append("")
            return index, in_place
    return index, in_place


def _perl(invocation: Invocation) -> None:
    """``perl -pi -e EXPR FILES`` writes FILES; ``perl -ne EXPR FILES`` reads them."""
    args = invocation.args
    codes: list[str] = []
    operands: list[str] = []
    in_place = False
    index = 0
    while index < len(args):
        arg = args[index]
        if operands or arg == "-" or not arg.startswith("-"):
            operands.append(arg)
        elif arg == "--":
            operands.extend(args[index + 1 :])
            break
        else:
            for position in range(1, len(arg)):
                letter = arg[position]
                if letter in "eE":
                    code = arg[position + 1 :]
                    if not code and index + 1 < len(args):
                        index += 1
                        code = args[index]
                    codes.append(code)
                    break
                if letter == "i":
                    in_place = True
                    break
                if letter in "IMmdDxC":
                    break
        index += 1
    if not codes:
        if not operands and invocation.stdin.fed and invocation.stdin.known_text is None:
            invocation.opaque = True
        return
    for operand in operands:
        if in_place:
            invocation.emit_path("write", operand, command="; ".join(codes))
        else:
            invocation.emit_path("read", operand)


def _awk(invocation: Invocation) -> None:
    options = spec(("-F", "-v", "-f", "-i", "-l", "-E", "--field-separator", "--assign",
                    "--file", "--include", "--load", "--exec"))  # fmt: skip
    parsed = parse(invocation.args, options)
    in_place = "inplace" in parsed.values("-i", "--include")
    operands = list(parsed.operands)
    program: str | None = None
    if operands and not parsed.has("-f", "--file", "-E", "--exec"):
        program = operands.pop(0)
    for source in parsed.values("-f", "--file"):
        invocation.emit_path("read", source)
    for operand in operands:
        if "=" in operand.split("/")[0] or operand == "-":
            continue
        if in_place:
            invocation.emit_path("write", operand, command=program)
        else:
            invocation.emit_path("read", operand)


HANDLERS: dict[str, Handler] = {
    **dict.fromkeys(_READERS, _read),
    **dict.fromkeys(_DELETERS, _delete),
    "touch": _touch,
    "truncate": _truncate,
    "tee": _tee,
    "cp": _copy,
    "install": _copy,
    "mv": _move,
    "ln": _link,
    "dd": _dd,
    "sed": _sed,
    "gsed": _sed,
    "perl": _perl,
    **dict.fromkeys(("awk", "gawk", "mawk", "nawk"), _awk),
}
