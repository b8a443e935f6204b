"""`sizer recommend`'s check of options the question does not read: its shortcut for a training question (the serving
request model not imported when nothing given could be a serving option) never lets a serving option through."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cli.recommend_cmd import COMMAND_LINE_ONLY, OPTION_OF_FIELD
from sizer.facade import InferenceRecommendRequest, RecommendRequest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("model", [RecommendRequest, InferenceRecommendRequest])
def test_no_command_line_only_option_is_a_field_of_either_request(model):
    # a name here that a request model had would let that option through the shortcut unchecked
    names = {OPTION_OF_FIELD.get(f, f) for f in model.model_fields} | set(model.model_fields)
    assert names.isdisjoint(COMMAND_LINE_ONLY)


def test_a_training_question_with_command_line_options_imports_no_serving_module():
    run = ("import sys, cli.main as m; argv = ['recommend', '--params', '7e9', '--tokens', '2e10', "
           "'--kind', 'gpu', '--max-devices', '8', '--json'];\n"
           "try: m.app_for(argv)(argv, prog_name='sizer')\nexcept SystemExit as e: assert not e.code, e.code\n"
           "print(sorted(n for n in sys.modules if n.startswith(('sizer.serving', 'sizer.simulator', 'sizer.passes', 'sizer.local'))))")
    done = subprocess.run([sys.executable, "-c", run], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "SIZER_CACHE_DIR": "off", "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"


# Modules a bare count's training question never needs: the models by name (a count is a generated shape,
# sizer.workloads.decoder_shape), the answer's models (--json writes the core's fields), a --workload's readers
NOT_FOR_A_BARE_COUNT = ("sizer.workloads.registry", "sizer.schemas.recommendation_result",
                        "sizer.workloads.workload_profile")


def test_a_bare_count_imports_neither_the_model_registry_nor_the_answer_models():
    from importlib.util import find_spec

    assert all(find_spec(name) is not None for name in NOT_FOR_A_BARE_COUNT)  # renamed: this test would pass vacuously
    run = ("import sys, cli.main as m; argv = ['recommend', '--params', '7e9', '--tokens', '2e10', '--max-devices', "
           "'8', '--json'];\n"
           "try: m.app_for(argv)(argv, prog_name='sizer')\nexcept SystemExit as e: assert not e.code, e.code\n"
           f"print(sorted(n for n in sys.modules if n in {NOT_FOR_A_BARE_COUNT!r}))")
    done = subprocess.run([sys.executable, "-c", run], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "SIZER_CACHE_DIR": "off", "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_the_shortcut_still_refuses_a_serving_option_beside_command_line_ones(cli):
    result = cli("recommend", "--params", "7B", "--tokens", "1e10", "--json", "--kind", "gpu", "--weights", "fp8")
    assert result.exit_code == 2 and "weights" in result.output and result.output.count("\n") == 1
