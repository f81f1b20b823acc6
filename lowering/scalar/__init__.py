"""What one element computes: each elementwise op's scalar formula (keyed by
op class), activations and their derivatives, complex arithmetic and the
polynomial approximations of `math_approx`."""
