"""The gym as verl's multi-turn agent loop: Dr. Kernel's rollouts inside verl (a plugin, not a
fork). Each trajectory is a conversation: the policy writes a kernel, the gym evaluates it, and
the gym's feedback (kgym eval's feedback template) opens the next turn, up to ``turns`` turns.

This module imports verl (its agent loop needs ray, hydra and tensordict), so it is loaded only
by verl's agent loop workers, named in an agent loop config file:

    # kgym_agent_loop.yaml, passed as actor_rollout_ref.rollout.agent.agent_loop_config_path
    - name: kgym_gym
      _target_: kgym.integrations.verl_agent_loop.KgymAgentLoop
      turns: 3            # up to this many (write, judge, feedback) rounds
      reward: dr_kernel   # any kgym.rewards spec name

verl instantiates the entry with hydra, so its keys besides ``name`` and ``_target_`` are this
class's keyword arguments.

Each dataset row sets ``agent_name: kgym_gym`` and carries the first turn's messages (kgym
eval's problem prompt; verl hands them over as ``raw_prompt``) and ``extra_info.task`` (a task
id the gym knows, or a task file the workers can read):
``kgym.integrations.verl.dataset_rows(tasks, prompts, agent_name="kgym_gym")`` writes them.
Environment: ``KGYM_SERVER`` (a gym service or a pool's front door; else each worker evaluates
in its own process through the C++ core) and ``KGYM_TOKEN``.

The output: every model token has mask 1 and the server's log-probability; the feedback
messages' tokens have mask 0. ``reward_score`` is the last turn's reward; ``extra_fields``
holds ``turn_scores`` (each turn's reward, for Dr. Kernel's per-turn returns) and the
verdict of each turn.
"""

from __future__ import annotations

import os
from typing import Any
from uuid import uuid4

from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput, register

from kgym.check import feedback
from kgym.evaluation.prompts import Prompts
from kgym.integrations.trl import Evaluator
from kgym.integrations.verl import _evaluator
from kgym.rewards import load_reward_spec

DEFAULT_TURNS = 3
DEFAULT_REWARD = "dr_kernel"


@register("kgym_gym")
class KgymAgentLoop(AgentLoopBase):
    """Up to ``turns`` (policy writes, gym judges, feedback) rounds per trajectory."""

    def __init__(
        self,
        *args: Any,
        evaluate: Evaluator | None = None,
        turns: int = DEFAULT_TURNS,
        reward: str = DEFAULT_REWARD,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.response_length = int(self.rollout_config.response_length)
        if int(turns) < 1:
            raise ValueError(f"kgym_gym: turns must be at least 1, got {turns}")
        self.turns = int(turns)
        # Validated here, so a misspelt reward fails when verl starts, not at the first turn.
        self.reward_spec = load_reward_spec(reward)
        self.prompts = Prompts.load()
        # The gym: given (tests), or the one verl's reward function uses in this process.
        self.evaluate = evaluate or _evaluator(None, os.environ.get("KGYM_TOKEN"))

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        messages = list(kwargs["raw_prompt"])
        task = str((kwargs.get("extra_info") or {}).get("task") or kwargs.get("task") or "")
        if not task:
            raise ValueError("a kgym_gym row needs extra_info.task (a task id or file)")
        prompt_ids = await self.ct_build_initial_tokens(messages)
        runtime_ids = list(prompt_ids)
        response_mask: list[int] = []
        response_logprobs: list[float] | None = None
        turn_scores: list[float] = []
        verdicts: list[str] = []
        metrics: dict[str, Any] = {}
        for turn in range(1, self.turns + 1):
            output = await self.server_manager.generate(
                request_id=uuid4().hex, prompt_ids=runtime_ids, sampling_params=sampling_params
            )
            merged, response_mask, logprobs = await self.ct_merge_assistant_token(
                runtime_ids,
                output.token_ids,
                response_mask,
                # verl aligns the server's log-probabilities with a list of the earlier ones.
                response_logprobs
                if response_logprobs is not None
                else []
                if output.log_probs
                else None,
                assistant_logprobs=output.log_probs or None,
            )
            runtime_ids = merged.token_ids
            if logprobs is not None:
                response_logprobs = logprobs
            text = self.tokenizer.decode(output.token_ids, skip_special_tokens=True)
            # The gym's evaluation blocks (seconds): in a thread, so other trajectories go on.
            result = await self.loop.run_in_executor(None, self.evaluate, task, text)
            reward = self.reward_spec(result)
            turn_scores.append(float(reward.total) if reward.valid else 0.0)
            verdicts.append(str(result.get("status")))
            messages = [*messages, {"role": "assistant", "content": text}]
            # Every turn is taken, as kgym train's gym loop does (a right answer can get faster).
            if turn == self.turns or len(response_mask) >= self.response_length:
                break
            previous = messages
            messages = [*messages, self.prompts.next_turn(feedback(result), turn + 1, self.turns)]
            merged, response_mask, logprobs = await self.ct_merge_context_msg(
                previous, messages, runtime_ids, response_mask, response_logprobs
            )
            runtime_ids = merged.token_ids
            if response_logprobs is not None:
                response_logprobs = logprobs or []
            if len(response_mask) >= self.response_length:
                break
        response_ids = runtime_ids[len(runtime_ids) - len(response_mask) :]
        prompt_ids = runtime_ids[: len(runtime_ids) - len(response_mask)]
        out = AgentLoopOutput(
            prompt_ids=prompt_ids,
            response_ids=response_ids[: self.response_length],
            response_mask=response_mask[: self.response_length],
            response_logprobs=response_logprobs[: self.response_length]
            if response_logprobs
            else None,
            reward_score=turn_scores[-1],
            num_turns=2 * len(turn_scores),
            metrics=metrics,
            extra_fields={},
        )
        out.extra_fields.update(
            {"turn_scores": turn_scores, "kgym_verdicts": verdicts, "tool_rewards": []}
        )
        return out
