"""kgym inside other trainers: TRL (reward functions for GRPOTrainer, and a multi-turn
environment for its environment_factory). docs/train.md, "Other trainers"."""
