"""``--emit``: the launch command or configuration of the setup an answer chose, in the tool people use.

Serving answers (``sizer inference``) launch under vLLM, SGLang or TensorRT-LLM (:mod:`sizer.launch.vllm` ...),
local ones under llama.cpp (:mod:`sizer.launch.llama_cpp`); training layouts (``sizer time``, ``sizer plan``)
under Megatron-LM, NeMo 2, torchtitan or DeepSpeed; fine-tunes (``sizer memory``, and ``time`` or ``plan`` of
one) under torchtune, Axolotl or Unsloth. One module per tool holds its version, the page its option names are
read from, the option names themselves and the emitter; :mod:`sizer.launch.tools` is the one registry.

The answer is read as typed values (:mod:`sizer.launch.setups`), never from its printed text. A tool that does
not launch the question's kind of setup, or cannot run the setup (TensorRT-LLM on an AMD GPU, a KV type the
engine does not store), is refused with :class:`~sizer.errors.InputError` naming ``emit`` and the tools that apply.

:func:`sizer.launch.dispatch.check_emit` runs before the answer (the tool fits the command);
:func:`sizer.plan.launch_answer.with_launch` after it (the tool fits the answer, and writes the command), with
the setup read by :mod:`sizer.plan.launch_readers`. The request and result modules import
:mod:`sizer.launch.emit_field` (the ``emit`` field) and :mod:`sizer.launch.answer` (the ``launch`` field), so this
package imports none of the engine, the planner or serving; this file imports nothing.
"""
