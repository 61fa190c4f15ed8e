"""The pipeline's order written once (core/pipeline.py): every listed bench stage and
report section exists where it is listed, and one that is not listed is refused in one line."""

import pytest

from core.errors import StudyError
from core import pipeline
from harness import bench
from report import render


@pytest.mark.parametrize("workload", sorted(pipeline.STAGES))
def test_every_listed_stage_is_a_stage_of_its_workload(workload):
    stages = bench.bench_stages(workload)
    assert [name for _, name, _, _ in stages] == list(pipeline.STAGES[workload])
    assert all(isinstance(title, str) and title for _, _, title, _ in stages)


def test_every_listed_section_renders_in_the_listed_order():
    got = [name for _, name, _ in render.sections()]
    assert got == list(pipeline.SECTIONS)


def test_an_unlisted_stage_is_refused_with_where_to_add_it(monkeypatch):
    monkeypatch.setitem(pipeline.STAGES, "cartpole", tuple(n for n in pipeline.STAGES["cartpole"] if n != "mpi"))
    with pytest.raises(StudyError, match="add it to STAGES\\['cartpole'\\] in core/pipeline.py"):
        bench.bench_stages("cartpole")


def test_an_unlisted_section_is_refused_with_where_to_add_it(monkeypatch):
    monkeypatch.setattr(pipeline, "SECTIONS", tuple(n for n in pipeline.SECTIONS if n != "method"))
    with pytest.raises(StudyError, match="add it to SECTIONS in core/pipeline.py"):
        render.sections()
