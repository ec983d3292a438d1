"""A tiny local Llama, a tiny hybrid LFM2 (short convolutions beside attention) and a
word-level tokenizer for CPU tests: nothing comes from a model hub."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "CHAT_TEMPLATE",
    "HERMES_CHAT_TEMPLATE",
    "IM_END",
    "SPECIAL_TOKENS",
    "TINY_WORDS",
    "build_tiny_lfm2",
    "build_tiny_llama",
    "build_tiny_tokenizer",
]

PAD, EOS, UNK, IM_START, IM_END = "<|pad|>", "<|eos|>", "<|unk|>", "<|im_start|>", "<|im_end|>"
SPECIAL_TOKENS = (PAD, EOS, UNK, IM_START, IM_END)
"""Ids 0-4, in this order."""

_MARKUP = ("<tool_call>", "</tool_call>")
"""Hermes tool-call markers: vLLM's ``hermes`` tool parser refuses a vocabulary without them."""

_PUNCTUATION = tuple(" \n\t.,:;!?'\"()[]{}<>/\\-_+=*#@$%&|`~^")

_WORD_LIST = """
zero one two three four five six seven eight nine ten
red orange yellow green blue purple black white gray brown pink
yes no true false ok done error
system user assistant tool name arguments content role
a an the is are was be of to in on at for with and or not
what which who how why when where this that it you i we they
say answer count add sum plus minus times equals number word color
please think question reply only first last next before after
run read write file test tests ls cat echo bash python pytest
fix bug code pass fail good bad right wrong
"""
TINY_WORDS: tuple[str, ...] = (*(str(digit) for digit in range(10)), *_WORD_LIST.split())
"""The vocabulary after the special tokens: small, but enough for toy rewardable tasks."""

_MESSAGE_HEAD = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' }}"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% elif message['content'] %}"
    "{% for part in message['content'] %}{{ part['text'] if part['text'] is defined }}{% endfor %}"
    "{% endif %}"
)
_MESSAGE_TAIL = (
    "{{ '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
_TOOL_CALLS = (
    "{% for call in message['tool_calls'] or [] %}"
    "{{ '<tool_call>\\n' }}"
    "{{ {'name': call['function']['name'], 'arguments': call['function']['arguments']} | tojson }}"
    "{{ '\\n</tool_call>' }}"
    "{% endfor %}"
)
CHAT_TEMPLATE = _MESSAGE_HEAD + _MESSAGE_TAIL
"""ChatML: ``<|im_start|>{role}\\n{content}<|im_end|>\\n`` per message, then the reply's head."""

HERMES_CHAT_TEMPLATE = _MESSAGE_HEAD + _TOOL_CALLS + _MESSAGE_TAIL
"""ChatML with hermes tool calls: an assistant's calls follow its text as
``<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>``, which vLLM's ``hermes``
parser reads back, and which renders again token for token when a harness sends the call
back (vLLM hands templates the arguments as a mapping)."""


def _vocabulary(words: Sequence[str]) -> dict[str, int]:
    ordered = [*SPECIAL_TOKENS, *_MARKUP, *_PUNCTUATION, *TINY_WORDS, *words]
    vocabulary: dict[str, int] = {}
    for token in ordered:
        vocabulary.setdefault(token, len(vocabulary))
    return vocabulary


def build_tiny_tokenizer(words: Sequence[str] = (), chat_template: str = CHAT_TEMPLATE) -> Any:
    """A ``PreTrainedTokenizerFast``: whole words and single symbols, decoding to exact text.

    ``words`` extend :data:`TINY_WORDS` (after them, so that the ids of the others stay).

    Words (letters only), and every digit and other character (spaces and newlines too), are
    tokens of their own, so
    ``decode(encode(text)) == text`` for in-vocabulary text and vLLM's detokeniser is exact.
    """
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.WordLevel(vocab=_vocabulary(words), unk_token=UNK))
    core.pre_tokenizer = pre_tokenizers.Split(Regex(r"[^\W\d_]+|\d|[\s\S]"), behavior="isolated")
    core.decoder = decoders.Fuse()
    core.add_special_tokens([AddedToken(token, special=True) for token in SPECIAL_TOKENS])
    core.add_tokens([AddedToken(token, special=False, normalized=False) for token in _MARKUP])
    fast_tokenizer: Any = PreTrainedTokenizerFast  # its __init__ is untyped
    tokenizer = fast_tokenizer(
        tokenizer_object=core,
        pad_token=PAD,
        eos_token=EOS,
        unk_token=UNK,
        additional_special_tokens=[IM_START, IM_END],
        model_max_length=2048,
        clean_up_tokenization_spaces=False,
    )
    tokenizer.chat_template = chat_template
    return tokenizer


def build_tiny_llama(
    directory: Path,
    *,
    seed: int = 0,
    words: Sequence[str] = (),
    chat_template: str = CHAT_TEMPLATE,
) -> Path:
    """Save a tiny random float32 ``LlamaForCausalLM`` and its tokenizer (see
    :func:`build_tiny_tokenizer` for ``words`` and ``chat_template``) to ``directory``.

    Two layers, hidden size 128, two heads of 64 (the smallest head vLLM's CPU attention
    takes), untied embeddings; generation stops at ``<|im_end|>`` or ``<|eos|>``.
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = build_tiny_tokenizer(words, chat_template)
    stop_ids = [tokenizer.convert_tokens_to_ids(IM_END), tokenizer.eos_token_id]
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        head_dim=64,
        max_position_embeddings=2048,
        tie_word_embeddings=False,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
        eos_token_id=stop_ids,
        dtype="float32",
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    return _save(model, tokenizer, stop_ids, directory)


def build_tiny_lfm2(directory: Path, *, seed: int = 0) -> Path:
    """Save a tiny random float32 ``Lfm2ForCausalLM``: a hybrid model whose ``layer_types``
    are a short-convolution layer and an attention layer, with the tiny tokenizer."""
    import torch
    from transformers import Lfm2Config, Lfm2ForCausalLM

    tokenizer = build_tiny_tokenizer()
    stop_ids = [tokenizer.convert_tokens_to_ids(IM_END), tokenizer.eos_token_id]
    lfm2_config: Any = Lfm2Config  # its __init__ is untyped
    config = lfm2_config(
        vocab_size=len(tokenizer),
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        layer_types=["conv", "full_attention"],
        block_auto_adjust_ff_dim=False,
        tie_word_embeddings=False,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
        eos_token_id=stop_ids,
        dtype="float32",
    )
    torch.manual_seed(seed)
    model = Lfm2ForCausalLM(config)
    return _save(model, tokenizer, stop_ids, directory)


def _save(model: Any, tokenizer: Any, stop_ids: list[int], directory: Path) -> Path:
    from transformers import GenerationConfig

    generation_config: Any = GenerationConfig  # its __init__ is untyped
    model.generation_config = generation_config(
        eos_token_id=stop_ids, pad_token_id=tokenizer.pad_token_id
    )
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory
