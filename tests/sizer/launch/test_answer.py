"""The launch field and its command line: flags one a line, switches alone, values quoted for a shell."""
import shlex

from sizer.launch.answer import Launch, command_line


def test_switches_values_and_quoting():
    text = command_line(["vllm", "serve", "my model"], {"--a": 4, "--b": True, "--c": False, "--d": 0.9, "--e": "x y"})
    assert shlex.split(text.replace("\\\n", " ")) == ["vllm", "serve", "my model", "--a", "4", "--b", "--d", "0.9",
                                                     "--e", "x y"]
    assert text.count("\\\n") == 4  # one continued line per flag written (False leaves --c out)


def test_a_launch_round_trips_through_json():
    launch = Launch(tool="vllm", version="vLLM 0.11", command="vllm serve m", options={"--tensor-parallel-size": 2},
                    documentation="https://docs.vllm.ai/")
    assert Launch.model_validate_json(launch.model_dump_json()) == launch and launch.config is None
