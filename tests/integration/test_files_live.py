"""Files translated whole on the real engine and the real default model: a small plain-text
file, a Word document (a bold run inside a paragraph), a gettext catalogue and SubRip
subtitles, each through the real `deepl` client's `translate_document_from_filepath` and
through the native /v1/documents. Each comes back in its own format, its structure kept (the
paragraphs and the bold run, the catalogue's entries and its Language header, the cues'
numbers and timings) and its text translated. A format not in the file registry is skipped
with a reason naming it; all four are registered now."""

from __future__ import annotations

import io
import time
from collections.abc import Callable
from pathlib import Path

import deepl
import httpx
import pytest

from dragoman.bench.servers import Launched
from dragoman.files import formats
from tests.integration.conftest import Pace

pytestmark = pytest.mark.integration

# Each test its own sentences: the sentence cache must not answer one test with another's.
SENTENCES: dict[tuple[str, str], tuple[str, str]] = {
    ("deepl", "txt"): ("The meeting starts at nine tomorrow morning.", "Bring the annual report."),
    ("deepl", "docx"): ("Our office will be closed on Friday.", "Please send the invoice today."),
    ("deepl", "po"): ("Save your changes before closing.", "The file could not be opened."),
    ("deepl", "srt"): ("Where did you put the keys?", "I left them on the kitchen table."),
    ("native", "txt"): ("The library opens at ten on Sundays.", "Children must bring an adult."),
    ("native", "docx"): ("The new bridge was finished last spring.", "Traffic is lighter now."),
    ("native", "po"): ("Your password has been changed.", "Enter the code we sent to you."),
    ("native", "srt"): ("It is raining again in the city.", "Take an umbrella with you."),
}
Pair = tuple[str, str]


def _txt(s: Pair) -> bytes:
    return (s[0] + "\n\n" + s[1] + "\n").encode()


def _docx(s: Pair) -> bytes:
    import docx

    doc = docx.Document()
    doc.add_paragraph(s[0])
    words = s[1].split()
    p = doc.add_paragraph(" ".join(words[:2]) + " ")
    p.add_run(" ".join(words[2:-1])).bold = True
    p.add_run(" " + words[-1])
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()


def _po(s: Pair) -> bytes:
    return (
        'msgid ""\nmsgstr ""\n"Language: en\\n"\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
        f'msgid "{s[0]}"\nmsgstr ""\n\nmsgid "{s[1]}"\nmsgstr ""\n'
    ).encode()


def _srt(s: Pair) -> bytes:
    return (
        f"1\n00:00:01,000 --> 00:00:03,000\n{s[0]}\n\n2\n00:00:04,000 --> 00:00:06,500\n{s[1]}\n"
    ).encode()


def _translated(out: str, source: str) -> bool:
    return bool(out.strip()) and out.strip() != source.strip()


def _check_txt(data: bytes, s: Pair) -> None:
    text = data.decode()
    assert text.count("\n\n") == 1, text  # the paragraph break kept
    for part, source in zip(text.split("\n\n"), s, strict=True):
        assert _translated(part, source), text


def _check_docx(data: bytes, s: Pair) -> None:
    import docx

    paragraphs = docx.Document(io.BytesIO(data)).paragraphs
    assert len(paragraphs) == 2
    assert _translated(paragraphs[0].text, s[0])
    assert _translated(paragraphs[1].text, s[1])
    assert any(run.bold and run.text.strip() for run in paragraphs[1].runs)  # the bold run


def _check_po(data: bytes, s: Pair) -> None:
    import polib

    catalogue = polib.pofile(data.decode())
    assert catalogue.metadata["Language"] == "de"
    assert [e.msgid for e in catalogue] == list(s)
    for entry in catalogue:
        assert _translated(entry.msgstr, entry.msgid), entry


def _check_srt(data: bytes, s: Pair) -> None:
    import srt

    cues = list(srt.parse(data.decode()))
    assert [(c.index, str(c.start), str(c.end)) for c in cues] == [
        (1, "0:00:01", "0:00:03"),
        (2, "0:00:04", "0:00:06.500000"),
    ]
    for cue, source in zip(cues, s, strict=True):
        assert _translated(cue.content, source), cue


SAMPLES: dict[str, tuple[Callable[[Pair], bytes], Callable[[bytes, Pair], None]]] = {
    "txt": (_txt, _check_txt),
    "docx": (_docx, _check_docx),
    "po": (_po, _check_po),
    "srt": (_srt, _check_srt),
}


def _sample(api: str, kind: str) -> tuple[bytes, Callable[[bytes], None]]:
    if kind not in {f.name for f in formats()}:
        pytest.skip(f"{kind}: not in the file registry yet")
    make, check = SAMPLES[kind]
    pair = SENTENCES[(api, kind)]
    return make(pair), lambda data: check(data, pair)


@pytest.mark.parametrize("kind", list(SAMPLES))
def test_the_deepl_client_translates_a_file(
    kind: str, live_server: Launched, pace: Pace, tmp_path: Path
) -> None:
    data, check = _sample("deepl", kind)
    source, out = tmp_path / f"sample.{kind}", tmp_path / f"sample.de.{kind}"
    source.write_bytes(data)
    client = deepl.Translator("any-key", server_url=live_server.url)
    status = client.translate_document_from_filepath(
        source, out, source_lang="EN", target_lang="DE", timeout_s=int(pace.deadline(400))
    )
    assert status.done and status.billed_characters and status.billed_characters > 0
    check(out.read_bytes())


@pytest.mark.parametrize("kind", list(SAMPLES))
def test_the_native_api_translates_a_file(kind: str, live_server: Launched, pace: Pace) -> None:
    data, check = _sample("native", kind)
    url = live_server.url
    r = httpx.post(
        f"{url}/v1/documents",
        files={"file": (f"sample.{kind}", data)},
        data={"target_lang": "de", "source_lang": "en"},
        timeout=60,
    )
    assert r.status_code == 202, r.text
    job = r.json()
    end = time.monotonic() + pace.deadline(400)
    while job["status"] not in ("done", "error"):
        assert time.monotonic() < end, f"not translated in time: {job}"
        time.sleep(0.5)
        job = httpx.get(f"{url}{job['links']['self']}", timeout=30).json()
    assert job["status"] == "done", job["error"]
    assert job["segments_done"] == job["segments_total"] > 0
    result = httpx.get(f"{url}{job['links']['result']}", timeout=30)
    assert result.status_code == 200
    check(result.content)
    assert httpx.delete(f"{url}{job['links']['self']}", timeout=30).status_code == 204
