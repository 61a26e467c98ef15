"""Errors that the command line turns into one clear message and an exit status, never a traceback."""
from __future__ import annotations


class Eval752Error(Exception):
    """Base class: the message is meant for the user as it stands."""

    exit_code = 2


class ConfigError(Eval752Error):
    """A configuration value or override is wrong."""


class DatasetError(Eval752Error):
    """A dataset file is malformed. ``problems`` lists every ``file:line: field: what is wrong``."""

    def __init__(self, problems: list[str], max_shown: int = 50) -> None:
        self.problems = list(problems)
        shown = self.problems[:max_shown]
        more = len(self.problems) - len(shown)
        text = "\n".join(shown) + (f"\n... and {more} more problems" if more > 0 else "")
        noun = "problem" if len(self.problems) == 1 else "problems"
        super().__init__(f"dataset has {len(self.problems)} {noun}:\n{text}")


class ProviderError(Eval752Error):
    """The provider cannot be used at all (missing key variable, unreachable endpoint)."""


class InputFormatError(Eval752Error):
    """A recorded-results or import file does not have the expected format."""
