"""LLM judges: sandboxed Jinja2 templates (``templates``), pre/post-processing steps and parsers
(``steps``), the judge's own provider (``client``), config resolution and trial mode (``spec``) and
summary metrics (``summary``). The checkers are ``eval752.checkers.judge`` ("judge") and
``eval752.checkers.pairwise`` ("pairwise_judge").

Submodules are not imported here: ``eval752.checkers`` imports them, and they import ``eval752.checkers``.
"""
