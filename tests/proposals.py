"""Proposals as the manager receives them, for the plan's specifications."""

from tender.agents.messages import Propose


def propose(api_id, function_id, score, name=None, evidence=None):
    """A contractor's proposal as the manager receives it."""
    return Propose(
        sender=f"api:{api_id}",
        receiver="manager",
        task_id=function_id or "t1",
        api_id=api_id,
        api_name=name or f"tool {api_id}",
        score=score,
        rationale="r",
        function_id=function_id,
        evidence=evidence,
    )
