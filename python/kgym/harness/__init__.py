"""The evaluation harness: runs inside a sandboxed child started by the C++ supervisor.

``python -I -m kgym.harness job.json`` loads the task and the candidate from the job directory,
checks correctness, times and profiles, and writes one report to the report channel (fd 3).
Nothing here is trusted with statistics: raw timing samples go to the supervisor.
"""
