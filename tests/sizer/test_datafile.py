"""sizer/datafile.py: the guarded YAML/JSON reader and the atomic writer (issue 12, items 5 and 7).

Every hostile file here is refused with one InputError (or the CatalogError that wraps it) and
none may crash, hang or run for long; the durations are not asserted (timing targets belong in
benchmarks), but each of these files used to crash the process or run for minutes.
"""
from __future__ import annotations

import functools
import os
import subprocess
import sys

import pytest
import yaml

from sizer import datafile
from sizer.engine.calibration import load_calibration, save_calibration
from sizer.errors import CatalogError, InputError
from sizer.hardware.catalog import load_catalog
from sizer.workloads.profile import load_profile
from sizer.workloads.source import FileRef

DEEP_YAML = "a: " + "[" * 25_000 + "]" * 25_000 + "\n"  # 50 kB; crashed libyaml's composer with SIGSEGV


def alias_bomb(levels: int = 10) -> str:
    """Each level is nine aliases of the one before: 9**levels nodes from a few hundred bytes."""
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for i in range(1, levels):
        previous, current = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{current}: &{current} [" + ",".join(f"*{previous}" for _ in range(9)) + "]")
    return "\n".join(lines) + "\n"


def test_plain_yaml_and_json_load():
    assert datafile.parse_yaml("a: &x [1, 2]\nb: *x\n", "f", "t") == {"a": [1, 2], "b": [1, 2]}
    assert datafile.parse_json('{"a": [1, 2.5, "x", null, true]}', "f", "t") == {"a": [1, 2.5, "x", None, True]}


def test_yaml_nested_too_deep_is_refused():
    with pytest.raises(InputError, match="nested at most 64 levels"):
        datafile.parse_yaml(DEEP_YAML, "catalog", "deep.yaml")
    assert datafile.parse_yaml("a: " + "[" * 60 + "]" * 60, "f", "t")  # within the limit


def test_flow_depth_is_checked_by_our_code_before_any_yaml_parser(monkeypatch):
    # PyYAML 6.0.4's scanner refuses deep flow collections with its own error before emitting an
    # event; our check must not depend on which parser version is installed, so no parser may run.
    def no_parser(*args, **kwargs):
        raise AssertionError("a YAML parser ran before the depth check")
    monkeypatch.setattr(datafile.yaml, "parse", no_parser)
    monkeypatch.setattr(datafile.yaml, "load", no_parser)
    for deep in (DEEP_YAML, "[" * 65 + "]" * 65, "a: {b: " + "[" * 70 + "]" * 70 + "}"):
        with pytest.raises(InputError) as caught:
            datafile.parse_yaml(deep, "catalog", "deep.yaml")
        assert caught.value.field == "catalog" and "nested at most 64" in caught.value.message


def test_quoted_and_commented_brackets_are_not_nesting():
    text = "a: '" + "[" * 100 + "'\nb: \"" + "{" * 100 + "\"  # " + "[" * 100 + "\n"
    assert datafile.parse_yaml(text, "f", "t") == {"a": "[" * 100, "b": "{" * 100}


def test_an_alias_bomb_is_refused_from_its_events():
    with pytest.raises(InputError, match="aliases expand to at most"):
        datafile.parse_yaml(alias_bomb(), "calibration", "bomb.yaml")
    # a few aliases, as people write them, are fine
    assert datafile.parse_yaml(alias_bomb(3), "f", "t")["c"][0][0] == ["x"] * 9


@pytest.mark.parametrize("text, words", [
    ("[" * 100_000 + "]" * 100_000, "nested at most"),
    ("[" * 65 + "]" * 65, "nested at most"),
    ('{"a": NaN}', "finite numbers"), ('{"a": -Infinity}', "finite numbers"), ('{"a": 1e999}', "finite numbers"),
    ('{"a": ' + "9" * 5000 + "}", "valid JSON"), ('{"a": ', "valid JSON"),
])
def test_bad_json_is_refused(text, words):
    with pytest.raises(InputError, match=words):
        datafile.parse_json(text, "report", "report.json")


def test_files_that_are_not_regular_small_utf8_files_are_refused(tmp_path):
    with pytest.raises(InputError, match="regular file"):
        datafile.load_json("/dev/zero", "report")
    with pytest.raises(InputError, match="regular file"):
        datafile.load_yaml(tmp_path, "catalog")
    with pytest.raises(InputError, match="readable file"):
        datafile.load_yaml(tmp_path / "missing.yaml", "catalog")
    big = tmp_path / "big.yaml"
    big.write_text("a: 1\n" * 100)
    with pytest.raises(InputError, match="at most 100 bytes"):
        datafile.load_yaml(big, "catalog", max_bytes=100)
    latin = tmp_path / "latin.yaml"
    latin.write_bytes("name: Gr\xfc\xdfe\n".encode("latin-1"))
    with pytest.raises(InputError, match="UTF-8"):
        datafile.load_yaml(latin, "workload")


def test_deep_yaml_in_every_entry_point_is_refused(tmp_path):
    # The regression is a SIGSEGV, so it is run in a child process that may crash without taking pytest along.
    deep = tmp_path / "deep.yaml"
    deep.write_text(DEEP_YAML)
    script = ("import sys\nfrom sizer.hardware.catalog import load_catalog\nfrom sizer.workloads.profile import load_profile\n"
              "from sizer.engine.calibration import load_calibration\nfrom sizer.errors import SizerError\n"
              "from sizer.workloads.source import FileRef\n"
              "for load in (load_catalog, lambda path: load_profile(FileRef(path)), load_calibration):\n"
              "    try:\n        load(sys.argv[1])\n    except SizerError as error:\n        print(error.message)\n")
    done = subprocess.run([sys.executable, "-c", script, str(deep)], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "SIZER_CACHE_DIR": "off"})
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.count("nested at most 64 levels") == 3


def test_an_alias_bomb_in_every_entry_point_is_refused(tmp_path):
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(alias_bomb(8))  # 9**8 = 43 million nodes; ten levels ran for 114 s in --calibration
    with pytest.raises(InputError, match="aliases expand"):
        load_calibration(bomb)
    with pytest.raises(InputError, match="aliases expand"):
        load_profile(FileRef(str(bomb)))
    with pytest.raises(CatalogError, match="aliases expand"):
        load_catalog(bomb)


def test_write_text_replaces_the_file_whole(tmp_path):
    path = tmp_path / "out.yaml"
    datafile.write_text(path, "first\n")
    path.chmod(0o640)
    datafile.write_text(path, "second\n")
    assert path.read_text() == "second\n"
    assert path.stat().st_mode & 0o777 == 0o640  # a replaced file keeps its permissions
    assert [p.name for p in tmp_path.iterdir()] == ["out.yaml"]  # no temporary file left behind


def test_a_failed_write_leaves_the_old_file_intact(tmp_path, monkeypatch):
    path = tmp_path / "calibration.yaml"
    path.write_text("good: 1\n")
    with pytest.raises(InputError, match="UTF-8"):
        datafile.write_text(path, "half written \ud800 then an encoding error")
    assert path.read_text() == "good: 1\n"

    def disk_full(descriptor):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(datafile.os, "fsync", disk_full)
    with pytest.raises(InputError, match="No space left"):
        datafile.write_text(path, "x" * 100_000)
    assert path.read_text() == "good: 1\n"
    assert [p.name for p in tmp_path.iterdir()] == ["calibration.yaml"]


def test_a_failed_calibration_rewrite_keeps_the_good_file(tmp_path, monkeypatch, catalog):
    # issue 12 item 7: one failed rewrite left a good calibration file at 0 bytes.
    from sizer.engine import calibration as module

    good = module.Calibration(created="2026-11-23", source="test", devices=[module.DeviceCalibration(
        device_id="t4", device_name="NVIDIA T4", efficiency_scale=2.0, step_overhead_s=0.001, runs=3, median_abs_error=0.05)])
    path = tmp_path / "calibration.yaml"
    save_calibration(good, path)
    before = path.read_text()
    import yaml  # calibration imports it only to write (the same module object)

    monkeypatch.setattr(yaml, "safe_dump", lambda *a, **k: "devices:\n  - \ud800 cannot be encoded\n")
    with pytest.raises(InputError):
        save_calibration(good, path)
    assert path.read_text() == before and load_calibration(path) == good


def test_write_text_refuses_folders_and_missing_folders(tmp_path):
    with pytest.raises(InputError, match="not a folder"):
        datafile.write_text(tmp_path, "x")
    with pytest.raises(InputError, match="writable file path"):
        datafile.write_text(tmp_path / "no" / "such" / "file.yaml", "x")


def test_write_text_through_a_link_and_to_a_device(tmp_path):
    target = tmp_path / "real.yaml"
    target.write_text("old")
    link = tmp_path / "link.yaml"
    link.symlink_to(target)
    datafile.write_text(link, "new")
    assert link.is_symlink() and target.read_text() == "new"
    datafile.write_text("/dev/null", "nothing to replace")  # a device is written to, not replaced


def test_the_project_reads_yaml_only_through_the_guarded_loader():
    # Every YAML/JSON read by the package goes through sizer.datafile; a new yaml.load elsewhere fails here.
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    offenders = []
    for folder in ("sizer", "cli", "api", "validation", "benchmarks"):
        for path in (root / folder).rglob("*.py"):
            if path.name == "datafile.py":
                continue
            text = path.read_text(encoding="utf-8")
            for call in ("yaml.load(", "yaml.safe_load(", "yaml.full_load(", "json.load(", "json.loads(", "yaml.unsafe_load("):
                if call in text:
                    offenders.append(f"{path.relative_to(root)}: {call}")
    assert not offenders


def test_yaml_events_cover_what_the_loader_reads():
    # The guard counts parser events; the built-in catalog passes it unchanged.
    from sizer.hardware.catalog import builtin_catalog_dir

    for path in sorted(builtin_catalog_dir().glob("*.yaml")):
        assert datafile.load_yaml(path, "catalog") == yaml.load(path.read_text(encoding="utf-8"), Loader=datafile.SafeLoader)


def _within(seconds: float, call) -> BaseException | None:
    """Run ``call`` in a daemon thread; fail if it has not returned after ``seconds`` [s]."""
    import threading

    outcome: list[BaseException | None] = []

    def run():
        try:
            call()
            outcome.append(None)
        except BaseException as error:  # noqa: BLE001 - handed back to the test
            outcome.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert outcome, f"still running after {seconds} s (it waits on the file)"
    return outcome[0]


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    # issue 18: a FIFO given as --model x.json or to `sizer calibrate` hung forever in open()
    import os

    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)
    for load in (datafile.load_json, datafile.load_yaml):
        error = _within(5, functools.partial(load, fifo, "model"))
        assert isinstance(error, InputError) and "regular file" in str(error)


@pytest.mark.parametrize("text", [
    "a: " + "9" * 5000 + "\n", "a: -" + "1" * 5000 + "\n", "a: [" + "7" * 4400 + "]\n", "a: 0x" + "f" * 5000 + "\n",
])
def test_huge_yaml_numbers_are_refused_by_name(text):
    # issue 18: a YAML integer of 5,000 digits raised Python's ValueError (int max_str_digits) as a traceback
    with pytest.raises(InputError, match="numbers of at most 100 characters"):
        datafile.parse_yaml(text, "catalog", "big.yaml")


def test_long_words_and_quoted_digits_are_not_numbers():
    assert datafile.parse_yaml("a: " + "x" * 500, "catalog", "t") == {"a": "x" * 500}
    assert datafile.parse_yaml("a: '" + "9" * 500 + "'", "catalog", "t") == {"a": "9" * 500}


# issue 43: -o through a dangling symbolic link created a file wherever the link pointed
@pytest.mark.parametrize("points", ["missing.csv", "no/such/folder/x.csv", "loop.csv"])
def test_a_dangling_link_is_refused_naming_the_field(tmp_path, points):
    link = tmp_path / ("loop.csv" if points == "loop.csv" else "out.csv")
    link.symlink_to(points)
    for call in (lambda: datafile.check_writable(link, "out"), lambda: datafile.write_text(link, "x", "out")):
        with pytest.raises(InputError, match=r"^out: .*dangling symbolic link"):
            call()
    assert sorted(p.name for p in tmp_path.iterdir()) == [link.name]  # nothing written anywhere


def _leftover(folder, name, age_s):
    path = folder / name
    path.write_text("half a write")
    os.utime(path, (os.path.getmtime(path) - age_s,) * 2)
    return path


def test_a_killed_writes_old_temporary_file_is_removed_by_the_next_write(tmp_path):
    # issue 43: a write killed before its rename left ".NAME.XXXXXXXX.tmp" for ever
    old = _leftover(tmp_path, ".out.csv.ab_d1234.tmp", datafile.TEMPORARY_MAX_AGE_S + 60)
    young = _leftover(tmp_path, ".out.csv.abcd5678.tmp", 5)  # perhaps another process's write in progress
    others = [_leftover(tmp_path, name, 10 * datafile.TEMPORARY_MAX_AGE_S)
              for name in (".other.csv.abcd1234.tmp", "out.csv.abcd1234.tmp", ".out.csv.abcd12345.tmp", ".out.csv.tmp")]
    datafile.write_text(tmp_path / "out.csv", "whole")
    assert not old.exists() and young.exists() and all(p.exists() for p in others)
    assert (tmp_path / "out.csv").read_text() == "whole"
