"""Reasoners: the embedded (offline, default) one and, where configured, an OpenAI-compatible LLM."""

from .base import Reasoner, UnknownReasoner, get_reasoner, reasoner_names

__all__ = ["Reasoner", "UnknownReasoner", "get_reasoner", "reasoner_names"]
