"""flashproof.report (the report of `flashproof report`, from Python) and the replay lines of
reports over Python implementations (`flashproof.replay(<your forward>, "FILE", ...)`)."""
import json
import os

import pytest

import flashproof
import kernels

SMALL = dict(max_seqlen=48, max_work=2**15, progress=False)
PYTHON_CALL = 'flashproof.replay(<your forward>, "'


def replay_file(line):
    """The case file a Python replay line names (a JSON string)."""
    assert line.startswith(PYTHON_CALL), line
    return json.JSONDecoder().raw_decode(line[len(PYTHON_CALL) - 1:])[0]


def test_report_of_a_python_campaign(tmp_path, capsys):
    flashproof.fuzz(kernels.forward, kernels.backward, out=tmp_path / "good", seed=4, cases=4, name="naive_np",
                    **SMALL)
    r = flashproof.report(tmp_path / "good", out=tmp_path / "report")
    for key in ("index_html", "summary_md", "results_json"):
        assert os.path.exists(r[key]), key
    assert r["results"]["records"] == 4 and "python:naive_np" in json.dumps(r["results"])
    assert r["results"]["summary"] in r["printed"] and r["printed"] in capsys.readouterr().out
    worst = [w for d in r["results"]["dtypes"] for w in d["worst_cases"]]
    assert worst
    for w in worst:
        file = replay_file(w["replay"])
        assert os.path.exists(file) and file.endswith(w["case_file"])
        # Backward cases name the backward too.
        assert w["replay"].endswith(", backward=<your backward>)") == flashproof.read_case(file).backward
        assert flashproof.replay(kernels.forward, file, backward=kernels.backward)["verdict"] != "fail"


def test_failures_replay_in_python(tmp_path):
    result = flashproof.fuzz(kernels.forward_missing_scale, out=tmp_path / "bad", seed=4, cases=2, name="noscale",
                             **SMALL)
    assert result["failure_files"], result
    r = flashproof.report([tmp_path / "bad"], out=tmp_path / "report", progress=False)
    failures = [f for d in r["results"]["dtypes"] for f in d["failures"]]
    assert failures
    for f in failures:
        file = replay_file(f["replay"])
        assert file.endswith(f["failure_file"]) and os.path.exists(file)
        assert flashproof.replay(kernels.forward_missing_scale, file)["verdict"] == "fail"
    summary = open(r["summary_md"]).read()
    assert "flashproof.replay(&lt;your forward&gt;" not in summary and PYTHON_CALL in summary
    assert "flashproof replay " not in summary


def test_built_in_implementations_keep_the_command(tmp_path):
    flashproof.fuzz("naive", out=tmp_path / "naive", seed=4, cases=2, **SMALL)
    r = flashproof.report(str(tmp_path / "naive"), out=str(tmp_path / "report"), progress=False)
    worst = [w for d in r["results"]["dtypes"] for w in d["worst_cases"]]
    assert worst and all(w["replay"].startswith("flashproof replay ") for w in worst)


def test_bad_input_is_a_one_line_value_error(tmp_path):
    with pytest.raises(ValueError) as e:
        flashproof.report(tmp_path / "nothing-here", out=tmp_path / "report")
    assert "\n" not in str(e.value) and not str(e.value).startswith("flashproof report: ")
    with pytest.raises(ValueError):
        flashproof.report([], out=tmp_path / "report")
    with pytest.raises(TypeError):
        flashproof.report(3, out=tmp_path / "report")
