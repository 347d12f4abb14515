"""The pieces of a generated module while it is assembled (see :mod:`.module`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..automata.dfa import WorkBudget
from . import manifest


@dataclass
class ModuleBuilder:
    """What a template's module needs, gathered while its parts are written."""

    sections: set[str] = field(default_factory=set)  # runtime section names (manifest.py)
    regexes: dict[str, int] = field(default_factory=dict)  # pattern source -> table slot
    tags: list[str] = field(default_factory=list)  # xml-inline tag patterns, index = slot
    data: list[str] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)
    # The template's DFA work budget: its delimiters' tables (counted when it loaded)
    # and then the tag patterns' (see fields._check_tag_pattern).
    budget: WorkBudget = field(default_factory=WorkBudget)

    def need(self, *names: str) -> None:
        """Sections ``names`` and what they depend on go into the module."""
        self.sections.update(manifest.closure(names))

    def runtime(self) -> list[tuple[manifest.Section, str]]:
        """The needed sections and their code, in manifest order."""
        return [(s, manifest.code(s.name)) for s in manifest.SECTIONS if s.name in self.sections]

    def regex(self, source: str) -> int:
        return self.regexes.setdefault(source, len(self.regexes))

    def tag(self, source: str) -> int:
        if source not in self.tags:
            self.tags.append(source)
        return self.tags.index(source)
