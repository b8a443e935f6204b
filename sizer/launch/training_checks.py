"""What the training and fine-tuning emitters share: the precision flag words, the recomputation words, and the
notes every layout carries (a layout that does not fit, a batch the answer did not choose)."""
from __future__ import annotations

from sizer.errors import InputError
from sizer.launch.setups import TrainingSetup


def notes_for(setup: TrainingSetup) -> list[str]:
    """Notes every training command carries.

    Parameters
    ----------
    setup : TrainingSetup
        The answer's layout.

    Returns
    -------
    list of str
        The notes.
    """
    notes = []
    if setup.model is None:
        notes.append("no model was named (a parameter count or a profile): put your model's name or path where "
                     "MODEL stands")
    if setup.fits is False:
        notes.append("the answer found this layout does NOT fit the device memory: it will run out of memory")
    if setup.accumulation is None:
        notes.append("a memory answer chooses no accumulation: 1 is written; set it for your global batch "
                     "(it does not change the memory per device)")
    return notes


def refuse_split(tool: str, setup: TrainingSetup, words: str) -> None:
    """Refuse, naming ``emit``, a layout with tensor, pipeline or context parallelism the tool cannot lay out.

    Parameters
    ----------
    tool : str
        The ``--emit`` name.
    setup : TrainingSetup
        The answer's layout.
    words : str
        What the tool does instead, for the message.
    """
    split = {"tp": setup.tp, "pp": setup.pp, "cp": setup.cp}
    given = [f"{k} {v}" for k, v in split.items() if v > 1]
    if given:
        raise InputError("emit", tool, f"a tool that lays out {' x '.join(given)}: {words}; use --emit megatron, nemo or "
                                       "torchtitan, or ask with --tp 1 --pp 1 --cp 1")


def refuse_precision(tool: str, setup: TrainingSetup, takes: tuple[str, ...]) -> None:
    """Refuse, naming ``emit``, a training precision the tool does not train at.

    Parameters
    ----------
    tool : str
        The ``--emit`` name.
    setup : TrainingSetup
        The answer's layout.
    takes : tuple of str
        The precisions it trains at.
    """
    if setup.precision not in takes:
        raise InputError("emit", tool, f"a tool that trains at {setup.precision}: {tool} trains at "
                                       f"{', '.join(takes)}; ask with --precision {takes[0]}")


def accumulation(setup: TrainingSetup) -> int:
    """Passes per optimizer step: the answer's, or 1 where it chose none (a memory answer).

    Parameters
    ----------
    setup : TrainingSetup
        The answer's layout.

    Returns
    -------
    int
        Micro-batches per optimizer step [1].
    """
    return setup.accumulation if setup.accumulation is not None else 1


def global_batch(setup: TrainingSetup) -> int:
    """Samples per optimizer step: the answer's, or micro-batch x accumulation x data-parallel ranks.

    Parameters
    ----------
    setup : TrainingSetup
        The answer's layout.

    Returns
    -------
    int
        Samples per optimizer step over all devices [1].
    """
    if setup.global_batch is not None:
        return setup.global_batch
    return setup.micro_batch * accumulation(setup) * setup.dp


def model_name(setup: TrainingSetup) -> str:
    """The model's name or path as given, or ``MODEL`` where none was named.

    Parameters
    ----------
    setup : TrainingSetup
        The answer's layout.

    Returns
    -------
    str
        The name a command writes.
    """
    return setup.model if setup.model is not None else "MODEL"
