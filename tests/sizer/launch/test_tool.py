"""Each tool module's TOOL: the setups it launches, its option names, and the emitter the registry calls."""
from sizer.launch import llama_cpp, megatron, torchtune, vllm
from sizer.launch.tool import Question, Tool


def test_each_module_describes_its_tool():
    for module, question in ((vllm, Question.SERVING), (llama_cpp, Question.LOCAL), (megatron, Question.TRAINING),
                             (torchtune, Question.FINETUNE)):
        tool = module.TOOL
        assert isinstance(tool, Tool) and question in tool.questions
        assert tool.emit is module.launch and tool.options == module.OPTIONS | ({"recipe"} if module is torchtune else set())
    assert vllm.TOOL.runtime == "vllm" and megatron.TOOL.runtime is None
