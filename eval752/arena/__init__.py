"""Pairwise comparison of models: win rate against a baseline (AlpacaEval's figures), position-swap
debiasing, and Bradley-Terry ratings on the Elo scale with bootstrap intervals and a leaderboard."""
from .bradley_terry import (
    Battle,
    bootstrap_ratings,
    fit_bradley_terry,
    leaderboard,
    render_markdown,
    win_probability,
)
from .winrate import WinRate, combine_swapped, preference_of, win_rate, win_rate_swapped

__all__ = [
    "Battle",
    "WinRate",
    "bootstrap_ratings",
    "combine_swapped",
    "fit_bradley_terry",
    "leaderboard",
    "preference_of",
    "render_markdown",
    "win_probability",
    "win_rate",
    "win_rate_swapped",
]
