"""`sizer validate` without torch, and the promise that the CLI and the core never import torch."""
from __future__ import annotations

import subprocess
import sys

HIDE_TORCH = "import sys; sys.modules['torch'] = None; "


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_missing_torch_exits_2_with_install_command():
    result = _run(HIDE_TORCH + "sys.argv = ['sizer', 'validate', '--quick']; from cli.main import main; main()")
    assert result.returncode == 2, result.stderr
    assert "torch" in result.stderr
    assert "pip install -e '.[validation]'" in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_device_exits_2():
    result = _run("import sys; sys.argv = ['sizer', 'validate', '--device', 'tpu']; from cli.main import main; main()")
    assert result.returncode == 2
    assert "--device" in result.stderr


def test_help_and_core_do_not_import_torch():
    code = ("import sys\nimport sizer, sizer.training.time_answer, sizer.training.memory_answer, validation, validation.predict\n"
            "from typer.testing import CliRunner\nfrom cli.main import app\n"
            "assert CliRunner().invoke(app, ['--help']).exit_code == 0\n"
            "assert CliRunner().invoke(app, ['validate', '--help']).exit_code == 0\n"
            "print('torch' in sys.modules)")
    result = _run(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_an_out_folder_that_is_a_dangling_link_is_refused_before_the_runs(tmp_path):
    # issue 43: outputs refuse dangling symbolic links; here before minutes of runs, not at the report
    link = tmp_path / "report"
    link.symlink_to(tmp_path / "missing")
    result = _run(HIDE_TORCH + f"sys.argv = ['sizer', 'validate', '--out', {str(link)!r}]; from cli.main import main; main()")
    assert result.returncode == 2 and "--out" in result.stderr and "dangling symbolic link" in result.stderr, result.stderr
    assert "torch" not in result.stderr  # refused before the missing extra is even looked for


def test_an_unknown_suite_exits_2_naming_the_option():
    result = _run("import sys; sys.argv = ['sizer', 'validate', '--suite', 'tpu']; from cli.main import main; main()")
    assert result.returncode == 2 and "--suite" in result.stderr and "Traceback" not in result.stderr


def test_the_gpu_suite_without_cuda_exits_2_saying_so(tmp_path):
    # the GPU suite has one size and needs CUDA: both refused before any run, with the reason
    quick = _run(f"import sys; sys.argv = ['sizer', 'validate', '--suite', 'gpu', '--quick', '--out', '{tmp_path}']; "
                 "from cli.main import main; main()")
    assert quick.returncode == 2 and "--quick" in quick.stderr
    cpu = _run(f"import sys; sys.argv = ['sizer', 'validate', '--suite', 'gpu', '--device', 'cpu', '--out', '{tmp_path}']; "
               "from cli.main import main; main()")
    assert cpu.returncode == 2 and "CUDA" in cpu.stderr and "Traceback" not in cpu.stderr


def test_the_gpu_suites_plan_and_questions_import_no_torch():
    result = _run("import sys\nimport validation.gpu_plan, validation.gpu_predict\nprint('torch' in sys.modules)")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
