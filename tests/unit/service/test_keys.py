from __future__ import annotations

import hashlib
import stat
from pathlib import Path

import pytest

from dragoman.errors import ConfigError, InvalidApiKey, MissingApiKey
from dragoman.service import keys
from dragoman.service.keys import (
    ANONYMOUS,
    KeyStore,
    add_key,
    hash_key,
    list_keys,
    parse_keys_file,
    revoke_key,
)


def digest(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def test_keys_off_without_file_or_env() -> None:
    store = KeyStore(None, None)
    assert not store.enabled
    assert store.authenticate(None) is ANONYMOUS


def test_env_keys_are_hashed_and_have_no_name() -> None:
    store = KeyStore(None, " k1 , k2,,")
    assert store.enabled
    assert store.authenticate("k2").key == digest("k2")
    assert store.authenticate("k2").name is None
    with pytest.raises(MissingApiKey):
        store.authenticate(None)
    with pytest.raises(InvalidApiKey):
        store.authenticate("k3")


def test_file_keys_carry_their_names(tmp_path: Path) -> None:
    path = tmp_path / "keys"
    path.write_text(f"# team keys\n\n{digest('a')} alice\n{digest('b').upper()}  # no name\n")
    store = KeyStore(path, None)
    assert store.authenticate("a").name == "alice"
    assert store.authenticate("b").name is None
    assert store.names() == ["alice"]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("secret-key", "expected '<sha256 hex digest> [name]'"),
        (f"{'a' * 64} two names", "expected '<sha256 hex digest> [name]'"),
        (f"{'a' * 64} bad/name!", "bad key name 'bad/name!'"),
    ],
)
def test_malformed_file_names_the_line(line: str, message: str) -> None:
    with pytest.raises(ConfigError) as exc:
        parse_keys_file(f"\n{line}\n", "keys.txt")
    assert exc.value.message.startswith("keys.txt:2: ")
    assert message in exc.value.message


def test_missing_file_refuses_every_key(tmp_path: Path) -> None:
    store = KeyStore(tmp_path / "none", None)
    assert store.enabled
    with pytest.raises(InvalidApiKey):
        store.authenticate("anything")


def test_add_prints_a_new_key_once_and_stores_only_its_digest(tmp_path: Path) -> None:
    path = tmp_path / "keys"
    key = add_key(path, "alice")
    assert key.startswith("dm-") and len(key) > 40
    text = path.read_text()
    assert key not in text
    assert text == f"{hash_key(key)} alice\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    second = add_key(path, "bob")
    assert second != key
    assert list_keys(path) == [("alice", hash_key(key)[:12]), ("bob", hash_key(second)[:12])]
    with pytest.raises(ConfigError, match="already has a key named 'alice'"):
        add_key(path, "alice")


def test_revoke_takes_effect_in_a_running_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keys, "_RECHECK_SECONDS", 0.0)
    path = tmp_path / "keys"
    alice, bob = add_key(path, "alice"), add_key(path, "bob")
    store = KeyStore(path, None)
    assert store.authenticate(alice).name == "alice"
    assert revoke_key(path, "alice")
    assert not revoke_key(path, "alice")
    with pytest.raises(InvalidApiKey):
        store.authenticate(alice)
    assert store.authenticate(bob).name == "bob"


def test_a_bad_edit_keeps_the_keys_that_were_good(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keys, "_RECHECK_SECONDS", 0.0)
    path = tmp_path / "keys"
    alice = add_key(path, "alice")
    store = KeyStore(path, None)
    path.write_text(path.read_text() + "oops\n")
    assert store.authenticate(alice).name == "alice"


def _add_many(path: str, names: list[str]) -> list[str]:
    return [add_key(Path(path), name) for name in names]


def test_keys_added_and_revoked_at_once_by_several_processes_are_all_kept(
    tmp_path: Path,
) -> None:
    """`dragoman keys add` run in parallel printed keys that never reached the file, and a
    revoke rewriting it meanwhile undid adds."""
    from concurrent.futures import ProcessPoolExecutor

    path = tmp_path / "keys"
    add_key(path, "doomed")
    batches = [[f"k{p}-{i}" for i in range(10)] for p in range(4)]
    with ProcessPoolExecutor(5) as pool:
        added = [pool.submit(_add_many, str(path), names) for names in batches]
        revoked = pool.submit(revoke_key, path, "doomed")
        printed = [key for f in added for key in f.result()]
        assert revoked.result()
    store = KeyStore(path, None)
    names = {store.authenticate(key).name for key in printed}
    assert names == {name for names in batches for name in names}
    assert "doomed" not in {name for name, _ in list_keys(path)}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_key_added_to_a_file_without_a_final_line_break_gets_its_own_line(
    tmp_path: Path,
) -> None:
    path = tmp_path / "keys"
    first = add_key(path, "first")
    path.write_text(path.read_text().rstrip("\n"))  # edited by hand
    second = add_key(path, "second")
    store = KeyStore(path, None)
    assert store.authenticate(first).name == "first"
    assert store.authenticate(second).name == "second"


def test_a_keys_file_that_cannot_be_read_is_a_config_error_and_a_running_store_keeps_its_keys(
    tmp_path: Path,
) -> None:
    """A file turned non-UTF-8 under a running server gave a 500 at each re-read; a directory
    or such a file at start, or under `dragoman keys`, was a traceback."""
    path = tmp_path / "keys"
    key = add_key(path, "ops")
    store = KeyStore(path, None)
    path.write_bytes(path.read_bytes() + b"\xff\xfe\n")
    store._checked = 0.0  # re-read at the next request
    assert store.authenticate(key).name == "ops"  # logged; the keys that were good stay
    for bad in (path, tmp_path):  # not UTF-8; a directory
        with pytest.raises(ConfigError, match="cannot read the keys file"):
            KeyStore(bad, None)
        with pytest.raises(ConfigError, match="cannot read the keys file"):
            list_keys(bad)
