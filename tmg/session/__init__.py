"""Sessions: where history and transcripts live, per mode, and who may write them."""
