"""Native text puzzles: seeded generators, text rendering, move parsing and real solvers."""
