"""Shelf labels, with two bugs on adjacent lines: fixed in parallel, their fixes clash."""


def label(name, qty):
    """'Apple x2': the product's name capitalized, then the quantity."""
    return f"{shown_name(name)} x{shown_qty(qty)}"


def shown_name(name): return name  # bug: not capitalized
def shown_qty(qty): return qty - 1  # bug: off by one
