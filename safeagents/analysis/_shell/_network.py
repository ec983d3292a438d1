"""Network commands: ``curl``, ``wget``, ``pip install URL``, ``nc``, ``ssh``, ``rsync``…"""

from __future__ import annotations

import posixpath
import re
from urllib.parse import urlsplit

from safeagents._actions import Effect
from safeagents.analysis._shell._model import Handler, Invocation
from safeagents.analysis._shell._options import parse, spec

_REMOTE_PATH = re.compile(r"(?:[^@/\s:]+@)?([A-Za-z0-9][A-Za-z0-9.-]*|\[[0-9A-Fa-f:.]+\]):(?!//)")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S+")
_DOMAIN = re.compile(r"[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?::\d+)?(?:[/?#]\S*)?")

_CURL = spec(("-o", "--output", "-d", "--data", "--data-raw", "--data-binary", "--data-urlencode",
              "--data-ascii", "--json", "-H", "--header", "-X", "--request", "-u", "--user", "-A",
              "--user-agent", "-e", "--referer", "-x", "--proxy", "-F", "--form", "--form-string",
              "-T", "--upload-file", "-K", "--config", "-w", "--write-out", "-m", "--max-time",
              "--connect-timeout", "-b", "--cookie", "-c", "--cookie-jar", "-r", "--range", "-C",
              "--continue-at", "-E", "--cert", "--cacert", "--key", "-D", "--dump-header",
              "--retry", "--retry-delay", "--retry-max-time", "-y", "--speed-time", "-Y",
              "--speed-limit", "--resolve", "--output-dir", "-z", "--time-cond", "-U",
              "--proxy-user", "--limit-rate", "--max-redirs", "-Q", "--quote", "--url",
              "--interface", "--connect-to", "--trace", "--trace-ascii", "--stderr",
              "--unix-socket", "--max-filesize", "--oauth2-bearer", "--proxy-header", "-P",
              "--ftp-port"))  # fmt: skip
_WGET = spec(("-O", "--output-document", "-o", "--output-file", "-a", "--append-output", "-P",
              "--directory-prefix", "-e", "--execute", "-t", "--tries", "-T", "--timeout", "-U",
              "--user-agent", "--header", "--user", "--password", "-w", "--wait", "-Q", "--quota",
              "-l", "--level", "-A", "--accept", "-R", "--reject", "-D", "--domains", "-I",
              "--include-directories", "-X", "--exclude-directories", "--post-data",
              "--post-file", "-B", "--base", "-i", "--input-file", "--referer", "--method",
              "--body-data", "--body-file", "--limit-rate"))  # fmt: skip
_PIP = spec(("-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-i", "--index-url",
             "--extra-index-url", "-f", "--find-links", "-t", "--target", "-d", "--dest",
             "--prefix", "--root", "--src", "--platform", "--python-version", "--implementation",
             "--abi", "--no-binary", "--only-binary", "--progress-bar", "--log", "--cache-dir",
             "--trusted-host", "--proxy", "--timeout", "--retries", "--exists-action",
             "--config-settings", "-C", "--upgrade-strategy", "--report", "--python", "--cert",
             "--client-cert"))  # fmt: skip
_NC = spec(("-p", "-s", "-w", "-x", "-X", "-e", "-c", "-i", "-q", "-W", "-T", "-I", "-O", "-V",
            "-M", "-m", "--source-port", "--exec", "--sh-exec", "--proxy"))  # fmt: skip
_SSH = spec(("-p", "-i", "-l", "-o", "-F", "-J", "-L", "-R", "-D", "-b", "-c", "-e", "-m", "-O",
             "-Q", "-S", "-W", "-w", "-E", "-B", "-I"), posix=True)  # fmt: skip
_SCP = spec(("-P", "-i", "-o", "-F", "-J", "-l", "-c", "-S", "-D", "-X"))
_RSYNC = spec(("-e", "--rsh", "--exclude", "--include", "--filter", "-f", "--files-from",
               "--port", "--password-file", "-T", "--temp-dir", "--log-file", "--partial-dir",
               "--backup-dir", "--chmod", "--suffix", "--timeout", "--bwlimit", "--max-size",
               "--min-size", "--compare-dest", "--copy-dest", "--link-dest", "--exclude-from",
               "--include-from", "-M", "--remote-option", "--out-format", "--rsync-path",
               "--chown", "--contimeout", "-B", "--block-size", "--iconv"))  # fmt: skip


def host_of(url: str) -> str | None:
    """The host of a URL, ``user@host:path`` remote, or bare ``example.com/x``."""
    try:
        if "://" in url:
            return urlsplit(url).hostname or None
        remote = _REMOTE_PATH.match(url)
        if remote is not None:
            return remote.group(1).strip("[]").lower()
        if _DOMAIN.fullmatch(url):
            return urlsplit("http://" + url).hostname or None
    except ValueError:
        return None
    return None


def network_effect(url: str) -> Effect:
    return Effect("network", url=url, host=host_of(url))


def _is_remote(operand: str) -> bool:
    return "://" in operand or _REMOTE_PATH.match(operand) is not None


def _url_basename(url: str) -> str:
    try:
        path = urlsplit(url if "://" in url else "http://" + url).path
    except ValueError:
        return ""
    return posixpath.basename(path)


def _curl(invocation: Invocation) -> None:
    parsed = parse(invocation.args, _CURL)
    urls = [*parsed.operands, *parsed.values("--url")]
    for url in urls:
        invocation.emit(network_effect(url))
    for output in parsed.values("-o", "--output"):
        if output != "-":
            invocation.emit_path("write", output)
    if parsed.has("-O", "--remote-name", "--remote-name-all"):
        directory = parsed.value("--output-dir") or "."
        for url in urls:
            name = _url_basename(url)
            if name:
                invocation.emit_path("write", posixpath.join(directory, name))
    for upload in parsed.values("-T", "--upload-file", "-K", "--config"):
        invocation.emit_path("read", upload)
    for name, value in parsed.options:
        if value and name.startswith(("-d", "--data", "--json")) and value.startswith("@"):
            invocation.emit_path("read", value[1:])
        elif value and name in ("-F", "--form") and "=@" in value:
            invocation.emit_path("read", value.split("=@", 1)[1].split(";", 1)[0])


def _wget(invocation: Invocation) -> None:
    parsed = parse(invocation.args, _WGET)
    for url in parsed.operands:
        invocation.emit(network_effect(url))
    for source in parsed.values("-i", "--input-file", "--post-file", "--body-file"):
        invocation.emit_path("read", source)
    outputs = parsed.values("-O", "--output-document")
    if outputs:
        for output in outputs:
            if output != "-":
                invocation.emit_path("write", output)
        return
    if parsed.has("-r", "--recursive", "-m", "--mirror"):
        return
    directory = parsed.value("-P", "--directory-prefix") or "."
    for url in parsed.operands:
        invocation.emit_path("write", posixpath.join(directory, _url_basename(url) or "index.html"))


def pip_effects(invocation: Invocation, args: list[str]) -> None:
    """``pip install|download|wheel``: network for URLs and indexes, reads for ``-r`` files."""
    parsed = parse(args, _PIP)
    if not parsed.operands or parsed.operands[0] not in ("install", "download", "wheel"):
        return
    subcommand, requirements = parsed.operands[0], parsed.operands[1:]
    for requirement_file in parsed.values("-r", "--requirement", "-c", "--constraint"):
        invocation.emit_path("read", requirement_file)
    indexes = parsed.values("-i", "--index-url", "--extra-index-url", "-f", "--find-links")
    for index in indexes:
        if "://" in index:
            invocation.emit(network_effect(index))
    for requirement in [*parsed.values("-e", "--editable"), *requirements]:
        url = _URL.search(requirement)
        if url is not None:
            invocation.emit(network_effect(url.group(0)))
        elif subcommand == "download" and not requirement.startswith((".", "/")):
            invocation.emit(Effect("network", url=requirement))


def _pip(invocation: Invocation) -> None:
    pip_effects(invocation, invocation.args)


def _uv(invocation: Invocation) -> None:
    if invocation.args[:1] == ["pip"]:
        pip_effects(invocation, invocation.args[1:])


def _netcat(invocation: Invocation) -> None:
    parsed = parse(invocation.args, _NC)
    host = parsed.operands[0] if parsed.operands else None
    invocation.emit(Effect("network", host=host))


def _ssh(invocation: Invocation) -> None:
    parsed = parse(invocation.args, _SSH)
    if parsed.operands:
        target = parsed.operands[0]
        host = host_of(target) if "://" in target else target.rsplit("@", 1)[-1]
        invocation.emit(Effect("network", url=target, host=host))


def _copy_remote(invocation: Invocation) -> None:
    """``scp``/``rsync``: network for remote operands, read/write for local ones."""
    parsed = parse(invocation.args, _RSYNC if invocation.name == "rsync" else _SCP)
    operands = parsed.operands
    if not operands:
        return
    *sources, destination = operands if len(operands) > 1 else [*operands, ""]
    for operand in operands:
        if operand and _is_remote(operand):
            invocation.emit(network_effect(operand))
    for source in sources:
        if not _is_remote(source):
            invocation.emit_path("read", source)
    if destination and not _is_remote(destination):
        invocation.emit_path("write", destination)
        if any(name.startswith("--delete") for name, _ in parsed.options):
            invocation.emit_path("delete", destination)


HANDLERS: dict[str, Handler] = {
    "curl": _curl,
    "wget": _wget,
    "pip": _pip,
    "pip3": _pip,
    "uv": _uv,
    "nc": _netcat,
    "ncat": _netcat,
    "netcat": _netcat,
    "telnet": _netcat,
    "ssh": _ssh,
    "scp": _copy_remote,
    "sftp": _ssh,
    "rsync": _copy_remote,
}
