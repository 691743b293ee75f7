"""Leaderboard: submission schema, validation, re-scoring from episode records, ranking with CIs."""
