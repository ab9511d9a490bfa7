"""The one place segue's version is written: the package metadata (pyproject.toml reads it
from here), ``segue.__version__`` and ``segue --version`` all come from this line."""

__version__ = "0.2.0"
