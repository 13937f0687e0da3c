"""site_builder: turns the dictionary's Python demos into a static site."""

__version__ = "0.1.0"
