"""A tiny calculator with one defect for the agent to fix."""


def add(a, b):
    """The sum of a and b."""
    return a + b


def mean(values):
    """The arithmetic mean of a non-empty list of numbers."""
    return sum(values) // len(values)
