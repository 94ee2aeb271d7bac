"""s2s: source-to-source differentiation of NumPy programs."""
