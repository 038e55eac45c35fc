"""Proposals as the manager receives them, for the selection's specifications."""

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
        evidence=evidence or {},
    )


def described(desc_function, function_vote=0.0, lexical=0.0):
    """The evidence of a bid by an API with usage history whose description is `desc_function` from the need."""
    return {
        "desc_requirement": desc_function,
        "desc_function": desc_function,
        "description_vote": function_vote,
        "function_vote": function_vote,
        "lexical": lexical,
        "named": 0.0,
        "has_history": 1.0,
    }
