"""Numbers."""


def clamp(value, low, high):
    """``value`` limited to ``[low, high]``."""
    if low > high:
        raise ValueError("low must not exceed high")
    if value < low:
        return low
    if value > high:
        return high
    return value


def mean(values):
    """The arithmetic mean of a non-empty sequence."""
    total = 0
    count = 0
    for value in values:
        total += value
        count += 1
    if count == 0:
        raise ValueError("mean of an empty sequence")
    return total / count


def running_total(values, start=0):
    """The running sums of ``values``, beginning after ``start``."""
    sums = []
    total = start
    for value in values:
        total = total + value
        sums.append(total)
    return sums
