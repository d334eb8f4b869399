"""`dragoman translate "text" --to fr`: ask a running server, or start the engine here. A path
to a file instead of a text translates the file, its format kept (`jobs/cli.py`)."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import httpx
from pydantic import SecretStr
from pydantic_settings import CliPositionalArg, SettingsConfigDict

from dragoman.errors import ConfigError, DragomanError, UnsupportedLanguage
from dragoman.logs import setup as setup_logs
from dragoman.settings import EngineSettings

if TYPE_CHECKING:
    from dragoman.service.settings import ServeSettings


class TranslateSettings(EngineSettings):
    model_config = SettingsConfigDict(cli_shortcuts={"output": "o"})

    text: CliPositionalArg[str]
    """Text to translate ('-' reads standard input), or the path of a file to translate whole,
    its format kept (a text that names an existing file is read as that file)."""

    output: Path | None = None
    """Where a file's translation is written; default: beside the file, the target language
    before its extension (report.docx -> report.de.docx)."""

    to: str = "fr"
    """Target language (ISO 639-1)."""

    source: str = "en"
    """Source language (ISO 639-1), or `auto`: detected."""

    server: str = "http://127.0.0.1:8000"
    """A running dragoman server to ask; when none answers there, the engine is started here."""

    api_key: SecretStr | None = None
    """The key to send the server (`Authorization: Bearer`) when its keys are on; prefer the
    DRAGOMAN_API_KEY environment variable to the flag."""

    architecture: Literal[
        "host", "continuous", "llama-cpp", "multiprocess", "static-batch", "echo"
    ] = "host"
    """The engine started here when no server answers: the host's choice (as `serve`'s), vLLM
    (`continuous`) or llama.cpp (`llama-cpp`). Serve's other values are taken (a config file
    or DRAGOMAN_ARCHITECTURE shared with `serve` must not fail a translation by a server) and
    refused only when the engine would start here."""

    log_format: Literal["text", "json"] = "text"
    """Log lines of an engine started here: `text`, or `json` (one JSON object a line on
    stderr, the engine's processes' too), as on `dragoman serve`; the translation itself is
    printed on stdout either way."""


# The server's answers that say the command's own input is wrong (an unknown language, a text
# too long or empty); a refused key, a full or draining server are the work failing (exit 1).
_WRONG_INPUT = frozenset({400, 413, 422})

log = logging.getLogger(__name__)


class _ServerError(DragomanError):
    status_code = 502
    code = "server_error"


def _via_server(s: TranslateSettings, text: str) -> str | None:
    """The translation from a running server; None when no server answers at `s.server`."""
    try:
        key = s.api_key.get_secret_value() if s.api_key else ""
        reply = httpx.post(
            f"{s.server.rstrip('/')}/v1/translate",
            json={"text": text, "source_lang": s.source, "target_lang": s.to},
            headers={"Authorization": f"Bearer {key}"} if key else None,
            timeout=httpx.Timeout(300.0, connect=2.0),
        )
    except httpx.ConnectError:
        return None
    except (httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:  # the input is wrong: exit 2
        raise ConfigError(f"{s.server}: {exc}") from None
    except httpx.HTTPError as exc:  # a timeout; an exception's text may be empty
        raise _ServerError(f"{s.server}: {str(exc) or type(exc).__name__}") from None
    try:
        body = reply.json()
        if reply.status_code == 200:
            return str(body["translations"][0]["text"])
        message = body["error"]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        message = f"{s.server} answered {reply.status_code} and is not a dragoman server"
    if reply.status_code in _WRONG_INPUT:  # --to, --source or the text: exit 2, as a bad flag
        raise ConfigError(str(message))
    raise _ServerError(str(message))


def _engine_here(s: TranslateSettings) -> ServeSettings:
    """The settings of the engine this host would serve with (`serve`'s choice), its model
    prepared and the notice that it starts here given; the caller opens it."""
    from dragoman.api.serve import check_llamacpp
    from dragoman.engine.choice import resolve_architecture
    from dragoman.engine.vllm_engine import weights_for
    from dragoman.models.catalogue import CATALOGUE
    from dragoman.models.prepare import prepare
    from dragoman.service.settings import ServeSettings

    engine = {name: getattr(s, name) for name in EngineSettings.model_fields}
    # `models=[]`: a config file's or DRAGOMAN_MODELS' `[[models]]` are serve's; read here, they
    # started every one of them for a text meant for `--model`.
    serve = ServeSettings(**engine, architecture=s.architecture, models=[])
    served, choice = resolve_architecture(serve)
    if served.architecture == "llama-cpp":
        check_llamacpp(served)
    elif s.model in CATALOGUE:
        prepare(s.model, s.data_dir, weights=weights_for(served))
    notice = (
        f"no server at {s.server}; starting the engine here ({choice.value}, about a minute)..."
    )
    if s.log_format == "json":  # a line of the log, as the engine's are
        log.warning("%s", notice)
    else:
        print(notice, file=sys.stderr)
    return served


def _check_architecture(s: TranslateSettings) -> None:
    if s.architecture not in ("host", "continuous", "llama-cpp"):
        raise ConfigError(
            f"--architecture {s.architecture}: translate starts host, continuous or llama-cpp"
        )


async def _local(s: TranslateSettings, text: str) -> str:
    """The translation from the engine this host would serve with (`serve`'s choice: vLLM, or
    llama.cpp where it answers one client sooner), started here for the one text."""
    from dragoman.api.serve import languages_for, open_translator
    from dragoman.detect.detector import LanguageDetector
    from dragoman.languages import check_code, check_pair

    _check_architecture(s)
    langs = languages_for(s.model)
    source = s.source
    try:
        if source == "auto":
            # As a server answers: a text with no letters, or already in the target language,
            # as it is; one in no language the model translates from, refused. (Both went on
            # to check_pair and failed as "source_lang and target_lang are both 'fr'".)
            check_code("target_lang", s.to, langs)
            detected = LanguageDetector(langs).detect(text)
            if detected.has_letters and detected.language is None:
                raise ConfigError(
                    f"the text's language is none {s.model} translates from "
                    f"({', '.join(langs)}); give --source to translate it as one"
                )
            source = detected.language or s.to
            if source == s.to:
                return text
        check_pair(source, s.to, langs)
    except UnsupportedLanguage as exc:  # checked before the engine starts: wrong input
        raise ConfigError(exc.message) from None
    async with open_translator(_engine_here(s), langs) as translator:
        return (await translator.translate(text, source, s.to)).text


def _translate_file(s: TranslateSettings, path: Path) -> None:
    """`path` translated whole by the server at --server, else by an engine started here;
    the output's path printed."""
    from dragoman.api.serve import languages_for, open_translator
    from dragoman.jobs.cli import FileJob, output_for, read_file, translate_here, via_server
    from dragoman.languages import check_code, check_pair
    from dragoman.service.settings import ServeSettings
    from dragoman.writable import check_file

    job = FileJob(
        path,
        s.output or output_for(path, s.to),
        None if s.source == "auto" else s.source,
        s.to,
        s.server,
        s.api_key.get_secret_value() if s.api_key else None,
    )
    check_file(job.output, "--output")  # before the work, not when its result is written
    if not via_server(job):
        # Everything the input decides, before the engine's minute: the architecture, the
        # languages, the file itself.
        _check_architecture(s)
        langs = languages_for(s.model)
        try:
            if job.source is None:
                check_code("target_lang", job.target, langs)
            else:
                check_pair(job.source, job.target, langs)
        except UnsupportedLanguage as exc:
            raise ConfigError(exc.message) from None
        parsed = read_file(job, ServeSettings.model_fields["max_file_bytes"].default)
        setup_logs(s.log_format)  # before the engine starts: it takes the format along
        served = _engine_here(s)
        asyncio.run(translate_here(job, parsed, served, lambda: open_translator(served, langs)))
    print(job.output)


def run_translate(args: list[str]) -> None:
    s = TranslateSettings(_cli_parse_args=args, _cli_prog_name="dragoman translate")  # type: ignore[call-arg]
    if s.text != "-" and Path(s.text).is_file():
        _translate_file(s, Path(s.text))
        return
    if s.output is not None:
        raise ConfigError(f"--output: {s.text!r} is no file; a text's translation is printed")
    text = sys.stdin.read() if s.text == "-" else s.text
    if not text.strip():
        # As a server refuses it (422, exit 2); without one, `--source auto` printed it back
        # (exit 0) and a given source started the engine for nothing.
        raise ConfigError("text: text must not be empty")
    result = _via_server(s, text)
    if result is None:
        setup_logs(s.log_format)  # before the engine starts: it takes the format along
        result = asyncio.run(_local(s, text))
    print(result)
