"""Shelf labels, with two bugs on one line: fixed in parallel, their fixes clash."""


def label(name, qty):
    """'Apple x2': the product's name capitalized, then the quantity."""
    return f"{name} x{qty - 1}"  # bugs: the name is not capitalized, the quantity is off by one
