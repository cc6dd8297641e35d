"""The errors the data layer raises, each with a message that says what to do next."""

from __future__ import annotations


class DataUnavailableError(RuntimeError):
    """Every route to a dataset failed.

    Attributes:
        dataset: the registry name of the dataset.
        attempts: ``(route description, error text)`` for every route that was tried, in order.
    """

    def __init__(self, message: str, dataset: str, attempts: list[tuple[str, str]]):
        super().__init__(message)
        self.dataset = dataset
        self.attempts = list(attempts)


class UnknownDatasetError(ValueError):
    """A dataset name that is not in the registry."""


class UnknownSplitError(KeyError, ValueError):
    """A split name a task does not have (a ``KeyError``, as a dict lookup raises, and a
    ``ValueError``); the message lists the splits it has."""

    def __str__(self) -> str:  # KeyError would show the message in quotes
        return str(self.args[0]) if self.args else ""


class ChecksumError(ValueError):
    """What was fetched does not have the sha256 the registry records."""


class DataFormatError(ValueError):
    """A data file that does not parse: the message names the file, the line and what was expected.

    Attributes:
        path: the file; line: the 1-based line number (``None`` when not line-based).
    """

    def __init__(self, message: str, path: object = None, line: int | None = None):
        super().__init__(message)
        self.path = path
        self.line = line
