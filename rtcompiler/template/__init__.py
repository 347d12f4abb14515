"""Stage 0: the response template -- validation and the typed model later stages read.

>>> from rtcompiler.template import load_template
>>> t = load_template({"start_anchor": "<think>", "fields": {"content": {}}})
>>> t.implicit, t.start_anchor.regex_source
('content', '<think>')
"""

from .errors import TemplateError, UnsupportedPatternError
from .load import load_template, load_template_file
from .model import Delimiter, Field, Template

__all__ = [
    "Delimiter",
    "Field",
    "Template",
    "TemplateError",
    "UnsupportedPatternError",
    "load_template",
    "load_template_file",
]
