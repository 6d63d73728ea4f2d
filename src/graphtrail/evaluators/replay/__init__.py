from .runner import AgentRunner, ReplayJob, answer_from_output, default_input, replay

__all__ = ["replay", "ReplayJob", "AgentRunner", "answer_from_output", "default_input"]
