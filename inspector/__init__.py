"""Context Inspector: see exactly what an agent's model is sent on every call, and why."""

from inspector._env import apply_offline_defaults

apply_offline_defaults()

__version__ = "0.1.0"
