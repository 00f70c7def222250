"""Self-distillation data: shipped domain prompt sets and batched, resumable generation by the target."""
