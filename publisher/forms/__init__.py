"""The two forms' states: each wires the pure rules to the UI and the gateway."""
