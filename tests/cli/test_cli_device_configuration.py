"""A chip named without its GPU cores or memory: the command line shows the configuration assumed."""
import json


def test_peak_and_catalog_show_state_the_configuration(cli):
    shown = cli("peak", "M1 Max", "--json")
    assert shown.exit_code == 0 and "24 or 32 GPU cores" in shown.stdout
    detail = cli("catalog", "show", "M1 Max", "--json")
    assert detail.exit_code == 0 and json.loads(detail.stdout)["id"] == "apple-m1-max-24c-32gb-gpu"
    assert "24 or 32 GPU cores" in json.loads(detail.stdout)["assumed"]
    table = cli("catalog", "show", "M2 Pro")
    assert table.exit_code == 0 and "16 or 19 GPU cores" in " ".join(table.stdout.split())
    assert json.loads(cli("catalog", "show", "apple-m2-pro-gpu", "--json").stdout)["assumed"] is None
