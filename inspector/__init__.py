"""Context Inspector: see exactly what an agent's model is sent on every call, and why.

Importing the package has no side effects on the host process: no environment variable is set and
neither litellm nor tiktoken is imported (see :mod:`inspector.offline`).
"""

from inspector.offline import apply_offline_defaults

__version__ = "0.1.0"
__all__ = ["__version__", "apply_offline_defaults"]
