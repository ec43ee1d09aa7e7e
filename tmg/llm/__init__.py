"""The model gateway: how the engine talks to a model, whatever the backend."""
