"""Relevance and selection: the one place that decides which items serve a function and which set a plan takes.
The agents keep their roles and messages on top of it."""
