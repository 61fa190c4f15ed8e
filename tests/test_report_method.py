"""The report's *Method and hardware* (report/sections/method.py): the hardware as the rows'
provenance recorded it, and per kind of row the command that writes it, read from the code."""
import json

from core import results
from core.machine import machine, machine_id


def _context(tmp_path, monkeypatch):
    from report.context import Context
    monkeypatch.setenv("STUDY_RESULTS_DIR", str(tmp_path / "results"))
    return Context(results_dir=tmp_path / "results", report_dir=tmp_path / "report")


def test_rows_record_the_hardware_and_their_command(tmp_path, monkeypatch):
    monkeypatch.setenv("STUDY_RESULTS_DIR", str(tmp_path / "results"))
    row = results.append("ceilings", {"ceiling": "fma_f32", "threads": 1, "value": 1.0, "unit": "GFLOP/s",
                                      "method": "test"})
    prov = row["provenance"]
    assert prov["command"].startswith("python ")
    hw = prov["machine"]["hardware"]
    assert isinstance(hw["hypervisor"], bool)
    assert machine_id(prov["machine"]) == machine_id()       # the new fields leave the id alone


def test_the_section_quotes_the_newest_rows_hardware_and_every_kind(tmp_path, monkeypatch):
    from report.sections import method
    monkeypatch.setenv("STUDY_RESULTS_DIR", str(tmp_path / "results"))
    for i in range(3):
        results.append("ceilings", {"ceiling": "fma_f32", "threads": 1, "value": 1.0 + i,
                                    "unit": "GFLOP/s", "method": "test"})
    results.append("perft", {"version": "v1_python", "position": "start", "depth": 1, "nodes": 20})
    text = method.render(_context(tmp_path, monkeypatch))
    table = [line for line in text.splitlines() if line.startswith("| `")]
    assert [line.split("|")[1].strip() for line in table] == ["`ceilings`", "`perft`"]
    assert table[0].split("|")[2].strip() == "3"                   # rows
    assert "(as recorded)" in table[0]
    caches = machine()["hardware"].get("caches", [])
    assert text.count("(CPUs ") == len(caches)
    assert "not recorded by these rows" not in text


def test_writers_are_read_from_the_harness_code():
    from report.sections.method import writers
    w = writers()
    assert w["throughput"] == ["bench"]
    assert w["chess_algorithm"] == ["algorithms --workload chess"]
    assert "mpi" in w["mpi"] and "e2e" in w["e2e_periodic"]


def test_rows_without_the_hardware_say_so(tmp_path, monkeypatch):
    from report.sections import method
    monkeypatch.setenv("STUDY_RESULTS_DIR", str(tmp_path / "results"))
    results.append("perft", {"version": "v1_python", "position": "start", "depth": 1, "nodes": 20})
    path = results.kind_path("perft")
    r = json.loads(path.read_text())
    del r["provenance"]["machine"]["hardware"], r["provenance"]["command"]
    path.write_text(json.dumps(r) + "\n")
    text = method.render(_context(tmp_path, monkeypatch))
    assert "not recorded by these rows" in text
    assert "`python -m harness perft`" in text
