"""A scenario module with a syntax error: reported as an error for this module, the others still run."""
import parity

def broken(:
    pass
