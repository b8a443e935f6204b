"""sizer/diskcache.py: the on-disk cache is an optimisation only; every failure falls back to building."""
import os
import pickle
import subprocess
import sys

import pytest

from sizer import diskcache


@pytest.fixture()
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv(diskcache.CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_builds_once_then_reads(folder):
    calls = []
    build = lambda: calls.append(1) or {"value": 42}  # noqa: E731
    assert diskcache.cached("thing", "k1", build) == {"value": 42}
    assert diskcache.cached("thing", "k1", build) == {"value": 42}
    assert len(calls) == 1 and (folder / "thing-k1.pickle").is_file()
    assert not list(folder.glob("*.tmp"))  # written to a temporary file and renamed


def test_a_truncated_or_foreign_entry_is_rebuilt(folder):
    folder.mkdir()
    (folder / "thing-k2.pickle").write_bytes(pickle.dumps({"value": 1})[:5])
    assert diskcache.cached("thing", "k2", lambda: "fresh") == "fresh"
    assert diskcache.cached("thing", "k2", lambda: "other") == "fresh"


def test_an_unwritable_folder_is_silently_skipped(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(diskcache.CACHE_ENV, str(blocker / "cache"))
    assert diskcache.cached("thing", "k3", lambda: 7) == 7


def test_off_turns_it_off(monkeypatch):
    monkeypatch.setenv(diskcache.CACHE_ENV, "off")
    assert diskcache.cache_dir() is None
    assert diskcache.cached("thing", "k4", lambda: 8) == 8


def test_keys_change_with_their_parts(tmp_path):
    path = tmp_path / "a.yaml"
    path.write_text("x")
    first = diskcache.key_of(diskcache.file_stamp(path))
    path.write_text("xy")
    assert diskcache.key_of(diskcache.file_stamp(path)) != first


def test_a_cached_process_gives_the_same_catalog_and_units(tmp_path):
    # Two fresh processes over an empty cache folder: the first builds and stores, the second
    # reads; both must print the same catalog and the same conversions as an uncached one.
    script = ("from sizer.hardware.catalog import load_catalog; from sizer.units import Quantity, ureg; c = load_catalog(); "
              "print(len(c), c.find('p40').model_dump_json(), Quantity(1.5, 'GHz').to('MHz'), ureg.parse_units('FLOP/s'), "
              "Quantity(24, 'GiB').to('B'), Quantity(1, 'bit').dimensionality)")
    outputs = []
    for cache in (str(tmp_path / "c"), str(tmp_path / "c"), "off"):
        env = {**os.environ, diskcache.CACHE_ENV: cache}
        outputs.append(subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                                      check=True, timeout=120).stdout)
    assert outputs[0] == outputs[1] == outputs[2]
    assert len(list((tmp_path / "c").glob("*.pickle"))) == 2


class _Planted:
    """A pickle that, when loaded, creates a marker file: proof that loading ran foreign code."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _plant(folder, marker):
    for entry in folder.glob("*.pickle"):
        entry.write_bytes(pickle.dumps(_Planted(marker)))


def test_a_pickle_planted_in_a_world_writable_folder_is_never_loaded(tmp_path, monkeypatch):
    # issue 12 item 4: a planted pickle ran during `sizer peak P40`.
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o777)
    monkeypatch.setenv(diskcache.CACHE_ENV, str(folder))
    (folder / "thing-k5.pickle").write_bytes(b"")
    _plant(folder, tmp_path / "PLANTED")
    (folder / "thing-k5.pickle").chmod(0o600)
    assert diskcache.cached("thing", "k5", lambda: "built") == "built"
    assert not (tmp_path / "PLANTED").exists()
    assert list(folder.glob("*.pickle")) == [folder / "thing-k5.pickle"]  # nothing stored in a shared folder


def test_an_entry_writable_by_others_is_not_loaded(folder, tmp_path):
    assert diskcache.cached("thing", "k6", lambda: "built") == "built"
    _plant(folder, tmp_path / "PLANTED")
    (folder / "thing-k6.pickle").chmod(0o666)
    assert diskcache.cached("thing", "k6", lambda: "rebuilt") == "rebuilt"
    assert not (tmp_path / "PLANTED").exists()


def test_an_entry_that_is_a_symbolic_link_is_not_followed(folder, tmp_path):
    folder.mkdir(mode=0o700)
    elsewhere = tmp_path / "elsewhere.pickle"
    elsewhere.write_bytes(pickle.dumps(_Planted(tmp_path / "PLANTED")))
    elsewhere.chmod(0o600)
    (folder / "thing-k7.pickle").symlink_to(elsewhere)
    assert diskcache.cached("thing", "k7", lambda: "built") == "built"
    assert not (tmp_path / "PLANTED").exists()


def test_a_created_folder_is_private(folder):
    diskcache.cached("thing", "k8", lambda: 1)
    assert folder.stat().st_mode & 0o777 == 0o700
    assert (folder / "thing-k8.pickle").stat().st_mode & 0o077 == 0


def test_each_kind_of_entry_is_bounded(tmp_path, monkeypatch):
    # a service asked many new questions writes one search per question: the oldest go, the disk stays bounded
    from sizer import diskcache

    monkeypatch.setenv("SIZER_CACHE_DIR", str(tmp_path / "cache"))
    for i in range(diskcache.MAX_ENTRIES_PER_NAME + 5):
        diskcache.cached("many", f"{i:04d}", lambda i=i: i)
    diskcache.cached("other", "one", lambda: 1)
    folder = tmp_path / "cache"
    assert len(list(folder.glob("many-*.pickle"))) == diskcache.MAX_ENTRIES_PER_NAME
    assert len(list(folder.glob("other-*.pickle"))) == 1
    assert diskcache.cached("many", f"{diskcache.MAX_ENTRIES_PER_NAME + 4:04d}", lambda: -1) == \
        diskcache.MAX_ENTRIES_PER_NAME + 4  # the newest is still read


def _leftover(folder, name, age_s):
    path = folder / name
    path.write_bytes(b"half a pickle")
    os.utime(path, (path.stat().st_mtime - age_s,) * 2)
    return path


def test_temporary_files_of_killed_writes_are_removed_at_start(folder, monkeypatch):
    # issue 43: a write killed between mkstemp and its rename left "<entry>XXXXXXXX.tmp" never pruned
    monkeypatch.setattr(diskcache, "_SWEPT", set())
    folder.mkdir(mode=0o700)
    key = diskcache.key_of("x")
    old = _leftover(folder, f"thing-{key}.pickleab_d1234.tmp", diskcache.TEMPORARY_MAX_AGE_S + 60)
    young = _leftover(folder, f"thing-{key}.pickleabcd5678.tmp", 5)  # another process's write in progress
    foreign = _leftover(folder, "notes.tmp", 10 * diskcache.TEMPORARY_MAX_AGE_S)  # not a name the cache gives
    assert diskcache.cached("thing", key, lambda: 1) == 1
    assert not old.exists() and young.exists() and foreign.exists()
    again = _leftover(folder, f"thing-{key}.pickleefgh1234.tmp", diskcache.TEMPORARY_MAX_AGE_S + 60)
    diskcache.cached("thing", key, lambda: 1)
    assert again.exists()  # once per folder and process: at start, not on every read
