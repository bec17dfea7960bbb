def format_cents(cents):
    """Format an amount in cents as a euro string: 1234 -> '12.34 EUR'."""
    return f"{cents // 100}.{cents % 100} EUR"  # bug: no zero padding of the cents
