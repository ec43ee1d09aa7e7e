"""fakeplur tests: the behaviour in-process (Fake.dispatch), plus one real `python -m fakeplur`."""
