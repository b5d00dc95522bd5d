"""hlolab: see why every output element of a StableHLO op has its value."""
