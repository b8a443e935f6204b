"""The core must stay importable without torch, fastapi or typer (spec §1)."""
import subprocess
import sys


def test_import_sizer_pulls_in_no_framework():
    code = ("import sys, sizer, sizer.plan.recommend, sizer.facade; "
            "print(','.join(m for m in ('torch', 'fastapi', 'typer', 'uvicorn') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


def test_the_facade_imports_the_engine_planner_and_serving_only_when_used():
    # issue 18 item 8: `sizer peak` started in 1.7-1.8x pint's start-up, most of it importing modules
    # peak never uses; the facade now loads them on first use (benchmarks/startup.py measures the time)
    code = ("import sys, sizer.facade as f; heavy = ('sizer.engine.training', 'sizer.engine.evaluate', "
            "'sizer.plan.recommend', 'sizer.plan.planner', 'sizer.inference.estimate', 'sizer.workloads.registry'); "
            "print(','.join(m for m in heavy if m in sys.modules)); f.recommend; f.TimeResult; "
            "print('sizer.plan.recommend' in sys.modules, 'sizer.engine.training' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == ["", "True True"], out


def test_one_command_runs_in_an_app_holding_that_command_alone():
    from cli.main import app, app_for

    assert app_for(["--help"]) is app and app_for([]) is app and app_for(["catalog", "list"]) is app
    single = app_for(["peak", "Tesla P40"])
    assert [c.callback.__name__ for c in single.registered_commands] == ["peak"]
    assert [c.callback.__name__ for c in app_for(["k1"]).registered_commands] == ["cells", "k1", "complexity"]
