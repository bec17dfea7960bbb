"""A tiny shopping cart with three bugs for Greenloop to fix."""


class Cart:
    def __init__(self):
        self.lines = {}

    def add(self, sku, price, qty=1):
        if qty <= 0:
            raise ValueError("quantity must be positive")
        price_, old = self.lines.get(sku, (price, 0))
        self.lines[sku] = (price, qty)  # bug: forgets the quantity already in the cart

    def total(self):
        return sum(price * qty for price, qty in self.lines.values())

    def discount(self, percent):
        """Total after a percentage discount, rounded to cents."""
        return round(self.total() * percent / 100, 2)  # bug: returns the discount, not the total

    def skus(self):
        return sorted(self.lines)
