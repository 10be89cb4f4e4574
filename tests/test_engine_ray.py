"""--engine ray: a local Ray cluster on loopback gives the local engine's profile exactly."""

from __future__ import annotations

import json

import pytest

from seqprof.dataset.analyze import AnalyzeOptions, build_profile, default_dataset_path
from seqprof.errors import SeqprofError

pytest.importorskip("ray.data")


@pytest.fixture
def shards(tmp_path):
    lines = default_dataset_path().read_text().splitlines()
    folder = tmp_path / "shards"
    folder.mkdir()
    for i in range(3):
        (folder / f"part-{i:02d}.jsonl").write_text("\n".join(lines[i * 200:(i + 1) * 200]) + "\n")
    return folder


def test_ray_gives_the_local_profile_and_a_shards_error_is_the_projects_error(shards):
    local = build_profile(shards, AnalyzeOptions(cache=False))
    on_ray = build_profile(shards, AnalyzeOptions(cache=False, engine="ray"))
    assert json.dumps(on_ray.to_dict()) == json.dumps(local.to_dict())  # same numbers, order and previews

    bad = shards / "part-01.jsonl"
    lines = bad.read_text().splitlines()
    lines[6] = "{broken"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(SeqprofError) as caught:
        build_profile(shards, AnalyzeOptions(cache=False, engine="ray"))
    assert caught.value.path == str(bad) and caught.value.line == 7
