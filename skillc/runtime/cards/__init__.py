"""Cards: the Atomic Component VM, one card instance, the card host (the call chain from an API
result to a card), the card store and the layout estimate."""
