"""``kgym eval``: a model evaluated on a task set, multi-turn, with the papers' metrics.

One module per stage: ``tasksets`` (what is evaluated), ``prompts`` (what the model reads),
``models`` (where completions come from), ``rollout`` (turns with the gym's feedback),
``rundir`` (the run folder and resuming), ``metrics`` (the figures), ``report`` (summary,
markdown and plots), ``export`` (training data). Definitions: docs/eval.md.
"""
