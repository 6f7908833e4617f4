"""skill-registry: validate, build and publish a registry of Agent Skills from a git repository."""

__version__ = "0.1.0"
