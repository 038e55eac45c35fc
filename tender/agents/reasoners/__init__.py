"""Reasoners: the embedded (offline, default) one and, where configured, an OpenAI-compatible LLM."""

from .base import Reasoner

__all__ = ["Reasoner"]
