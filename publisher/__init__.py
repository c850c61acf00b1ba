"""The Animals We Confuse publisher website (Reflex app)."""
