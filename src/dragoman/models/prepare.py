"""`dragoman model prepare`: assemble an embedded GGUF, verify it, convert it once into a
Hugging Face safetensors directory that vLLM loads, and cache it under the data directory.

Atomic and idempotent: the model is built in a temporary directory beside its final place and
renamed into it only when complete, so an interrupted run leaves nothing half-made behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from dragoman.errors import ModelError
from dragoman.models.catalogue import CATALOGUE, CatalogueModel
from dragoman.models.gguf_forms import GgufForm, form_name, form_stem, requantize

log = logging.getLogger(__name__)

READY_MARKER = ".dragoman-ready"
DIGESTS = ".dragoman-sha256"
"""Beside the marker: each file's sha256 as it was made (`sha256sum` lines, `sha256sum -c`
reads them), for `model prepare --verify`; start-up checks the marker's sizes only."""
_BLOCK = 8 << 20

Progress = Callable[[str, int, int], None]  # (stage, done, total)


def _no_progress(stage: str, done: int, total: int) -> None:
    return None


def model_dir(data_dir: Path, name: str, weights: str = "full") -> Path:
    """Where catalogue model `name` is prepared in the form `weights` (full or quantized)."""
    return data_dir / "models" / (name if weights == "full" else f"{name}.{weights}")


def is_prepared(path: Path, sha256: str = "") -> bool:
    """`path` was made whole (its marker is written last) and is whole still, and, when
    `sha256` is given, made from the GGUF of that checksum: a catalogue update keeping a
    model's name makes the directory prepared from the older file stale."""
    marker = path / READY_MARKER
    if not (marker.is_file() and (path / "config.json").is_file()):
        return False
    try:
        made_from, *_ = marker.read_text().splitlines() or [""]
    except (OSError, ValueError):  # overwritten with garbage: not a marker of ours
        return False
    return (not sha256 or made_from.strip() == sha256) and not damage(path)


def damage(path: Path) -> str:
    """What is wrong with the files of the prepared directory `path` against the sizes its
    marker lists ("" when nothing is, or when the marker, an older release's, lists none): a
    file deleted or cut short (a full disk, a copy stopped midway) is found here, in a stat
    each, rather than as a traceback deep in the engine's loader."""
    marker = path / READY_MARKER
    try:
        _, *listed = marker.read_text().splitlines()
    except (OSError, ValueError):
        return f"{marker.name} is unreadable"
    for line in listed:
        size, _, name = line.partition("\t")
        try:
            actual = (path / name).stat().st_size
        except OSError:
            return f"{name} is missing"
        if str(actual) != size:
            return f"{name} has {actual} bytes, not {size}"
    return ""


def model_path(model: str, data_dir: Path, weights: str = "full") -> str:
    """What resolve_model hands vLLM for `model`, unchecked: the path a running engine loaded,
    named without reading the disk (it may have been removed or re-prepared since)."""
    if model in CATALOGUE:
        return str(model_dir(data_dir, model, weights))
    local = Path(model).expanduser()
    return str(local.resolve()) if local.exists() else model


def resolve_model(model: str, data_dir: Path, weights: str = "full") -> str:
    """What to hand vLLM for `model`: a prepared catalogue dir (in the form `weights`), a local
    dir, or a hub id (those two as they are)."""
    if (entry := CATALOGUE.get(model)) is not None:
        path = model_dir(data_dir, model, weights)
        if not is_prepared(path, entry.sha256):
            flag = "" if weights == "full" else f" --weights {weights}"
            broken = damage(path) if (path / READY_MARKER).is_file() else ""
            state = (
                f"is damaged in {path} ({broken})" if broken else f"is not prepared in {data_dir}"
            )
            raise ModelError(
                f"model {model!r} ({weights} weights) {state}; run `dragoman model prepare{flag}`"
            )
        return str(path)
    local = Path(model).expanduser()
    if local.exists():
        if not (local / "config.json").is_file():
            raise ModelError(f"{local} is not a Hugging Face model directory (no config.json)")
        return str(local.resolve())
    return model  # a hub id


def chunk_files(entry: CatalogueModel) -> list[Path]:
    files = []
    for chunk in entry.chunks:
        spec = importlib.util.find_spec(chunk.package)
        if spec is None or not spec.submodule_search_locations:
            need = " ".join(entry.pip_packages)
            raise ModelError(
                f"package {chunk.package!r} holding part of {entry.name} is not installed; "
                f"install it with: pip install {need}"
            )
        path = Path(next(iter(spec.submodule_search_locations))) / chunk.path
        if not path.is_file():
            raise ModelError(f"{path} is missing from package {chunk.package!r}")
        files.append(path)
    return files


def assemble(entry: CatalogueModel, dest: Path, progress: Progress = _no_progress) -> Path:
    """Concatenate the chunks into `dest` and check size and sha256."""
    files = chunk_files(entry)
    total = sum(f.stat().st_size for f in files)
    if total != entry.size:
        raise ModelError(f"{entry.name}: chunks add up to {total} bytes, expected {entry.size}")
    digest = hashlib.sha256()
    done = 0
    with dest.open("wb") as out:
        for f in files:
            with f.open("rb") as src:
                while block := src.read(_BLOCK):
                    digest.update(block)
                    out.write(block)
                    done += len(block)
                    progress("assemble", done, total)
    if digest.hexdigest() != entry.sha256:
        raise ModelError(f"{entry.name}: sha256 {digest.hexdigest()} does not match {entry.sha256}")
    return dest


def convert_gguf(gguf: Path, out: Path, needs_chat_template: bool = True) -> None:
    """GGUF -> bf16 safetensors + tokenizer, loadable by vLLM and transformers."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from dragoman.host import detect

    # Every CPU this process may use (torch's default counts the machine's, not our mask's).
    torch.set_num_threads(len(detect().usable_cpus))
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(
        gguf.parent, gguf_file=gguf.name, dtype=torch.bfloat16
    )
    # transformers 5 marks a GGUF-loaded model as quantized and refuses to save it; the weights
    # are already dequantized, so the marks are stale.
    model.hf_quantizer = None  # type: ignore[assignment]
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    if needs_chat_template and not getattr(tokenizer, "chat_template", None):
        raise ModelError(f"{gguf.name} carries no chat template")


def prepare(
    name: str, data_dir: Path, progress: Progress = _no_progress, weights: str = "full"
) -> Path:
    """Make catalogue model `name` ready under `data_dir` in the form `weights` (the full
    weights are always made: a quantized form takes its config, tokenizer and norms from
    them); return its directory."""
    entry = CATALOGUE.get(name)
    if entry is None:
        known = ", ".join(sorted(CATALOGUE))
        raise ModelError(f"unknown model {name!r}; the catalogue has: {known}")
    full = model_dir(data_dir, name)
    final = model_dir(data_dir, name, weights)
    if is_prepared(final, entry.sha256):
        _tidy(final.parent, name)
        return final
    if weights != "full":
        from dragoman.models.quantize import FORMS

        if weights not in FORMS:
            raise ModelError(f"unknown weights {weights!r}; known: full, {', '.join(FORMS)}")
    # One process prepares a model at a time (two starts at once, two pods on one volume):
    # the other waits and finds it made. Under the lock, what a killed run left is removed.
    with _disk_errors(f"cannot prepare {name} in {data_dir}"):
        final.parent.mkdir(parents=True, exist_ok=True)
        with _locked(final.parent / f".{name}.lock"):
            if is_prepared(final, entry.sha256):
                return final
            _remove_leftovers(final.parent, name)
            work = Path(tempfile.mkdtemp(prefix=f".{name}{_PARTIAL}", dir=final.parent))
            try:
                _make(entry, data_dir, work, full, final, weights, progress)
            finally:
                shutil.rmtree(work, ignore_errors=True)
    return final


@contextlib.contextmanager
def _disk_errors(what: str) -> Iterator[None]:
    """A full disk or a data directory that cannot be written, as one line (a ModelError),
    not a traceback: `what: No space left on device`. safetensors reports its own writes'
    failures in its own type ("I/O error: No space left on device (os error 28)")."""
    from safetensors import SafetensorError

    try:
        yield
    except OSError as exc:
        raise ModelError(f"{what}: {exc.strerror or exc}") from exc
    except SafetensorError as exc:
        raise ModelError(f"{what}: {exc}") from exc


_PARTIAL = ".partial-"


def _make(
    entry: CatalogueModel,
    data_dir: Path,
    work: Path,
    full: Path,
    final: Path,
    weights: str,
    progress: Progress,
) -> None:
    from dragoman.models.quantize import FORMS, quantize

    gguf = _cached_gguf(entry, data_dir) or assemble(entry, work / entry.gguf_name, progress)
    if not is_prepared(full, entry.sha256):
        progress("convert", 0, 1)
        out = work / "hf"
        convert_gguf(gguf, out, needs_chat_template=entry.prompt == "chat")
        _finish(out, full, entry.sha256)
        progress("convert", 1, 1)
    if weights in FORMS:
        progress(f"quantize to {weights}", 0, 1)
        out = work / weights
        quantize(
            gguf, full, out, weights, full_layers=entry.w8a8_full, smooth_alpha=entry.w8a8_smooth
        )
        _finish(out, final, entry.sha256)
        progress(f"quantize to {weights}", 1, 1)


@contextlib.contextmanager
def _locked(path: Path, wait: bool = True) -> Iterator[bool]:
    """An exclusive lock on the file `path` (released when the process ends, however it ends);
    with `wait` false, only if no one holds it: yields whether it is held."""
    with open(path, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not wait:
                yield False
                return
            # said, or a second prepare sits silent for the minute the first one takes
            log.warning("waiting for another process, which holds %s", path)
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield True


def _tidy(models: Path, name: str) -> None:
    """`_remove_leftovers`, unless a run is preparing `name` now (it removes them itself) or
    the prepared models are on a volume mounted read-only."""
    try:
        with _locked(models / f".{name}.lock", wait=False) as held:
            if held:
                _remove_leftovers(models, name)
    except OSError:
        pass


def _remove_leftovers(models: Path, name: str) -> None:
    """The work directories of runs preparing `name` that were killed (SIGKILL, a power cut),
    each up to a GGUF and a converted model in size; the caller holds the model's lock. Also
    an older release's, named `.<name>-` and mkdtemp's eight characters."""
    for old in (*models.glob(f".{name}{_PARTIAL}*"), *models.glob(f".{name}-????????")):
        if old.is_dir():
            log.info("removing %s, left by an interrupted prepare", old)
            shutil.rmtree(old, ignore_errors=True)


def _finish(out: Path, final: Path, sha256: str) -> None:
    """Mark `out` complete, with the size and the digest of each of its files, and move it
    into place in one rename."""
    files = sorted(f for f in out.rglob("*") if f.is_file())
    sizes = "".join(f"{f.stat().st_size}\t{f.relative_to(out)}\n" for f in files)
    digests = "".join(f"{_sha256(f)}  {f.relative_to(out)}\n" for f in files)
    (out / DIGESTS).write_text(digests)
    (out / READY_MARKER).write_text(f"{sha256}\n{sizes}")
    if final.exists():  # a stale, unfinished directory from an older layout
        shutil.rmtree(final)
    out.rename(final)


def gguf_path(
    name: str, data_dir: Path, progress: Progress = _no_progress, form: GgufForm = "shipped"
) -> Path:
    """Catalogue model `name`'s GGUF in `form` (`models/gguf_forms.py`), made once and kept
    beside its prepared directory (`<data_dir>/models/`) for engines that run GGUF (llama.cpp):
    the shipped file assembled from its packages, or a form re-encoded from it. Written to a
    temporary file and renamed, so an interrupted run leaves no partial file under that name."""
    entry = CATALOGUE.get(name)
    if entry is None:
        raise ModelError(f"{name!r} is not in the catalogue; only catalogue models ship a GGUF")
    if form == "shipped":
        cached = _cached_gguf(entry, data_dir)
        if cached is not None:
            return cached
        shipped = data_dir / "models" / entry.gguf_name
        made = _made(
            shipped,
            lambda tmp: assemble(entry, tmp, progress),
            ready=lambda: _cached_gguf(entry, data_dir) is not None,
        )
        _checked(made).write_text(f"{entry.sha256}\n")
        return made
    final = data_dir / "models" / form_name(entry.gguf_name, form, entry.sha256)
    if _whole(final):
        return final
    shipped = gguf_path(name, data_dir, progress)
    progress(f"re-encode as {form}", 0, 1)

    def make(tmp: Path) -> None:
        requantize(shipped, tmp, form)
        # Noted before the rename: a run killed after it leaves no form without its digest
        # (for `model prepare --verify`); killed before, the form is made again.
        _sized(final).write_text(f"{tmp.stat().st_size}\n")
        _checked(final).write_text(f"{_sha256(tmp)}\n")

    # other versions of the form (an older recipe, an older shipped file) are of no more use
    stale = f"{form_stem(entry.gguf_name, form)}*.gguf"
    made = _made(final, make, stale=stale, ready=lambda: _whole(final))
    progress(f"re-encode as {form}", 1, 1)
    return made


def _whole(form: Path) -> bool:
    """The GGUF form `form` is there with the size noted when it was made: one cut short (a
    copy stopped midway, a disk that filled) is made again rather than handed to llama.cpp,
    which fails to load it. A file with no note (an older release's) is taken as it is."""
    if not form.is_file():
        return False
    note = _sized(form)
    return not note.is_file() or note.read_text().strip() == str(form.stat().st_size)


def _sized(form: Path) -> Path:
    """The note of the size `form` had when it was made."""
    return form.with_name(f".{form.name}.size")


def _made(
    final: Path,
    make: Callable[[Path], object],
    stale: str = "",
    ready: Callable[[], bool] | None = None,
) -> Path:
    """`final`, written by `make` to a temporary file beside it and renamed into place. One
    process makes it at a time (a lock file beside it: two pods sharing a volume, two starts
    at once); the one that waited finds it made (`ready`, by default: the file is there).
    Under the lock, the temporary files of a maker that was killed are removed, and the files
    matching the pattern `stale`."""
    with _disk_errors(f"cannot write {final}"):
        final.parent.mkdir(parents=True, exist_ok=True)
        with _locked(final.parent / f".{final.name}.lock"):
            if ready() if ready else final.is_file():
                return final
            for old in final.parent.glob(f".{final.name}-*"):
                old.unlink(missing_ok=True)
            if stale:
                for old in final.parent.glob(stale):
                    if old != final:
                        log.info("removing %s, an older form of the model", old)
                        old.unlink(missing_ok=True)
                        _sized(old).unlink(missing_ok=True)
                        _checked(old).unlink(missing_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{final.name}-", dir=final.parent)
            os.close(fd)
            try:
                make(Path(tmp))
                Path(tmp).rename(final)
            finally:
                Path(tmp).unlink(missing_ok=True)
    return final


def _cached_gguf(entry: CatalogueModel, data_dir: Path) -> Path | None:
    """The GGUF `gguf_path` keeps, if it is there and is the catalogue's file. Only an
    assembled and checked file is renamed to that name, and the checksum it was checked
    against is written beside it: a catalogue update keeping the name and size is assembled
    again. A file with no note beside it (an older release's, or a maker killed between the
    rename and the note) is hashed once and noted if it matches."""
    path = data_dir / "models" / entry.gguf_name
    if not path.is_file() or path.stat().st_size != entry.size:
        return None
    note = _checked(path)
    if note.is_file():
        return path if note.read_text().strip() == entry.sha256 else None
    if _sha256(path) != entry.sha256:
        return None
    note.write_text(f"{entry.sha256}\n")
    return path


def _checked(gguf: Path) -> Path:
    """The note of the checksum `gguf` was checked against (the shipped file), or had when it
    was made (a re-encoded form)."""
    return gguf.with_name(f".{gguf.name}.sha256")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as src:
        while block := src.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()
