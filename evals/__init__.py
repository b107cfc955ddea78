"""evals stage of memdir."""
