"""Flow scripts (``skillc run --script``): scripted conversations replayed through the card host,
and their readable report."""
