"""Stage 6: round-trip checking -- does a response template invert its chat template?

``check(template, chat_template, ...)`` draws assistant messages with hypothesis,
renders them with the chat template as ``apply_chat_template`` would, cuts the
assistant turn out after the generation prompt, parses it with the compiled
parser (whole and in random chunks) and compares with the message under the
grammar's normalisation. It also reports static findings about the template.
"""

from .check import CheckReport, check
from .render import ChatRenderer

__all__ = ["ChatRenderer", "CheckReport", "check"]
