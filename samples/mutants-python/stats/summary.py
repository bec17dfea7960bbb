"""Small statistics over lists of numbers (the sample `greenloop bench mutants` mutates)."""


def mean(values):
    if not values:
        raise ValueError("mean of nothing")
    return sum(values) / len(values)


def clamp(value, low, high):
    if value < low:
        return low
    if value > high:
        return high
    return value


def running_total(values):
    out = []
    total = 0
    for v in values:
        total = total + v
        out.append(total)
    return out


def above(values, threshold):
    return [v for v in values if v > threshold]
