"""skillc: a compiler and runtime for WeChat Mini Program AI-mode skills."""

__version__ = "0.1.0"
