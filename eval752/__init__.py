"""eval752: evaluate LLMs and the vendors that serve them."""
__version__ = "0.1.0"
