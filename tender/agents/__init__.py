"""Contract-net agents: a manager lets a requirement out to contractor agents, one per API or per category."""

from .messages import (
    AcceptProposal,
    Backtrack,
    CallForProposals,
    ContractNetMessage,
    Failure,
    Inform,
    Propose,
    RejectProposal,
    Refuse,
    Routing,
    Transcript,
)
from .plan import Cost, Plan, PlanStep, RecommendedApi, Run, Stages, StepStatus
from .protocols import PROTOCOLS, Protocol
from .request import Constraints, InvalidRequest, Request

__all__ = [
    "PROTOCOLS",
    "AcceptProposal",
    "Backtrack",
    "CallForProposals",
    "Constraints",
    "ContractNetMessage",
    "Cost",
    "Failure",
    "Inform",
    "InvalidRequest",
    "Plan",
    "PlanStep",
    "Propose",
    "Protocol",
    "RecommendedApi",
    "RejectProposal",
    "Refuse",
    "Request",
    "Routing",
    "Run",
    "Stages",
    "StepStatus",
    "Transcript",
]
