"""``kgym train``: a single-node RL trainer for kernel-writing policies, one file per stage.

``config`` (every knob, its default and its source), ``policy`` (the model and tokenizer),
``data`` (prompts and references), ``rollout`` (sampling, with the sampler's log-probabilities),
``reward`` (through kgym.rewards), ``advantage`` (through kgym.rl), ``loss`` (PPO-clip and its
token aggregations), ``update`` (optimiser, schedule, clipping), ``loop`` (steps, metrics,
checkpoints and exact resume). docs/train.md describes the loop and what is built so far.
"""
