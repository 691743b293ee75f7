"""Reference RL trainers, one readable file per algorithm, learning from the episode ledger."""
