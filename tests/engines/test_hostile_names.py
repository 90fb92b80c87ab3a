"""Names other people chose — run ids and engine names in engines' results.json — never become a path outside the
output folder, nor a query unquoted: `loadtest merge` refuses them in one line (exit 2) or keeps them in their place."""

from __future__ import annotations

import json
import posixpath
import uuid
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace

import pytest
from helpers import in_process
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from test_engines import engine, load

from loadtest.account.azurite import azurite_connection_string
from loadtest.engines import blobs
from loadtest.report import charts

HOSTILE_IDS = {
    "climbs out": '../../esc"; print x //',
    "absolute": "{tmp}/escaped",  # the test's own folder
    "a dot segment": "..",
    "a newline": "r1\nlet x = 1;",
    "a quote": 'r"1',
    "HTML": "<img src=x onerror=alert(1)>",
    "a NUL": "r\x001",
    "5 KB": "r" * 5000,
}


@pytest.fixture(scope="module")
def engine_files(tmp_path_factory) -> dict[str, bytes]:
    """One engine's files as a run writes them (results.json naming buckets.parquet beside it), made once."""
    folder = tmp_path_factory.mktemp("engine")
    engine("e", load(2, seconds=2)).write(folder)
    return {path.name: path.read_bytes() for path in folder.iterdir() if path.is_file()}


def engines_of(files: dict[str, bytes], folder: Path, *, run_id: str = "r1", names: tuple[str, str] = ("a", "b")) -> list[str]:
    """Two engines' folders of run ``run_id`` under ``folder``, named ``names`` in their results.json."""
    for i, name in enumerate(names):
        (folder / f"e{i}").mkdir(parents=True)
        for file, data in files.items():
            (folder / f"e{i}" / file).write_bytes(data)
        data = json.loads(files["results.json"])
        data["run"]["id"], data["mergeable"]["engine"] = run_id, name
        (folder / f"e{i}" / "results.json").write_text(json.dumps(data))
    return [str(folder / "e0"), str(folder / "e1")]


@pytest.fixture
def no_charts(monkeypatch) -> None:
    """The page drawn without its charts (matplotlib's second a merge): where files land is the question here."""
    monkeypatch.setattr(charts, "all_charts", lambda results: defaultdict(str))


def written(root: Path) -> set[Path]:
    return {path for path in root.rglob("*") if path.is_file()}


def one_line_refusal(code: int | str, err: str) -> bool:
    return code == 2 and err.count("\n") == 1 and err.endswith("\n") and "Traceback" not in err


@pytest.mark.parametrize("case", HOSTILE_IDS, ids=list(HOSTILE_IDS))
def test_a_hostile_run_id_in_results_is_refused_in_one_line_and_nothing_written(case, engine_files, tmp_path, monkeypatch):
    """The merge's default folder is reports/<run id>/merged: the id must be a name, not a path (nor a query)."""
    root = tmp_path / "root"
    work = root / "work"
    work.mkdir(parents=True)
    sources = engines_of(engine_files, root / "in", run_id=HOSTILE_IDS[case].format(tmp=tmp_path))
    before = written(tmp_path)
    monkeypatch.chdir(work)
    code, _, err = in_process(monkeypatch, "merge", *sources)
    assert one_line_refusal(code, err), err
    assert "e0/results.json: run.id " in err and "letters, digits" in err, err
    assert written(tmp_path) == before


@pytest.mark.parametrize("case", ["a dot segment", "climbs out", "a newline", "HTML"])
def test_a_hostile_engine_name_in_results_is_refused_in_one_line(case, engine_files, tmp_path, monkeypatch):
    sources = engines_of(engine_files, tmp_path, names=("a", HOSTILE_IDS[case]))
    monkeypatch.chdir(tmp_path)
    code, _, err = in_process(monkeypatch, "merge", *sources, "--out", "m")
    assert one_line_refusal(code, err), err
    assert "e1/results.json: mergeable.engine " in err and "letters, digits" in err, err
    assert not (tmp_path / "m").exists()


def test_a_good_merge_still_writes_its_default_folder(engine_files, no_charts, tmp_path, monkeypatch):
    sources = engines_of(engine_files, tmp_path, run_id="20261122-101500-ab12")
    monkeypatch.chdir(tmp_path)
    code, _, err = in_process(monkeypatch, "merge", *sources)
    assert code == 0, err
    assert (tmp_path / "reports" / "20261122-101500-ab12" / "merged" / "results.json").is_file()


class Listed:
    """A blob container as the SDK's client lists and downloads it (the user's own: any names in it), no service."""

    container_name = "runs"

    def __init__(self, blobs: dict[str, bytes]) -> None:
        self.blobs = blobs

    def __enter__(self) -> Listed:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def list_blobs(self, name_starts_with: str) -> list[SimpleNamespace]:
        return [SimpleNamespace(name=name) for name in self.blobs if name.startswith(name_starts_with)]

    def download_blob(self, name: str) -> SimpleNamespace:
        reached = posixpath.normpath(name)  # as the URL's dot segments are resolved on the way (urllib3)
        return SimpleNamespace(readall=lambda: self.blobs[reached])


@pytest.mark.parametrize("folder", ["..", ".", "a b", "é"])
def test_a_blob_listed_under_the_run_whose_engine_folder_is_not_a_name_is_refused(engine_files, folder, monkeypatch):
    """``run/../results.json`` in the user's container would fetch another blob (its URL resolved to
    ``results.json``): the listing is refused in one line, naming the rule, before anything is downloaded."""
    good = engine_files["results.json"]
    container = Listed({"rid/a/results.json": good, f"rid/{folder}/results.json": good, "results.json": good})
    monkeypatch.setattr(blobs, "open_container", lambda *args, **kwargs: container)
    monkeypatch.setattr(container, "download_blob", None)  # nothing downloaded
    given = ("--from-container", "runs", "--run-id", "rid", "--connection-string", azurite_connection_string(1, blob_port=2))
    code, _, err = in_process(monkeypatch, "merge", *given, "--out", "m")
    assert one_line_refusal(code, err), err
    assert f"runs/rid/<engine>/results.json whose <engine> is {folder!r}: not a name: 1-63 letters" in err, err


#: Text a hostile name is made of: what climbs out of a folder or a quoted string, and what a page or a line breaks on.
PIECES = st.sampled_from(["..", "/", "\\", '"', "'", "\n", "\r", "\x00", "<script>", "&", "$x$", "a", "-", ".", " ", "é"])
HOSTILE = st.one_of(
    st.lists(PIECES, min_size=1, max_size=8).map("".join),
    st.sampled_from([name for name in HOSTILE_IDS.values() if "{tmp}" not in name] + ["/escaped"]),
    st.text(min_size=1, max_size=20),
)
#: Names the rule takes, some with dots ("a..b" stays in its folder): half the cases, so that merges run too.
NAMES = st.one_of(st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,8}", fullmatch=True), HOSTILE)


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(run_id=NAMES, name=NAMES, out=st.booleans())
def test_merge_inputs_with_hostile_names_are_merged_or_refused_in_one_line(
    engine_files, no_charts, tmp_path, monkeypatch, run_id, name, out
):
    """Each case: exit 0 or exit 2 with one line and no traceback; nothing written outside the output folder."""
    root = tmp_path / uuid.uuid4().hex[:8]
    work = root / "work"
    work.mkdir(parents=True)
    run_id, name = (f"{root}{value}" if value.startswith("/") else value for value in (run_id, name))  # absolute: kept in here
    sources = engines_of(engine_files, root / "in", run_id=run_id, names=("a", name))
    before = written(tmp_path)
    monkeypatch.chdir(work)
    code, _, err = in_process(monkeypatch, "merge", *sources, *(("--out", "m") if out else ()))
    event(f"exit {code}")
    assert code == 0 or one_line_refusal(code, err), err
    new = written(tmp_path) - before
    folder = work / "m" if out else work / "reports"
    assert all(folder in path.parents for path in new), sorted(map(str, new))
    assert code != 0 or new


@pytest.mark.parametrize("name", ["e\n1", "e\x001", "e\r1"])
def test_a_source_path_with_a_control_character_is_refused_in_one_line(engine_files, name, tmp_path, monkeypatch):
    sources = engines_of(engine_files, tmp_path)
    monkeypatch.chdir(tmp_path)
    code, _, err = in_process(monkeypatch, "merge", sources[0], name, "--out", "m")
    assert one_line_refusal(code, err) and f"{name!r}: a path with a control character" in err, err
    assert not (tmp_path / "m").exists()
